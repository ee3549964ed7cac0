"""webnn.Hub (spec/api.md §13) against a local HTTP server on 127.0.0.1 — never the internet."""

import io
import json
import os
import socket
import struct
import sys
import threading
import urllib.error
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import webnn
from webnn import hub as hub_module

GRAPH = """webnn_graph "hub_test" v2 {
  inputs {
    x: f32[2, 3];
  }

  consts {
    w: f32[3, 2] @weights("w");
  }

  nodes {
    y = matmul(x, w);
  }

  outputs { y; }
}
"""
W = np.arange(6, dtype=np.float32).reshape(3, 2)
WEIGHTS = b"WGWT" + struct.pack("<I", 1) + W.tobytes()
MANIFEST = json.dumps(
    {
        "format": "wg-weights-manifest",
        "version": 1,
        "endianness": "little",
        "tensors": {
            "w": {"dataType": "float32", "shape": [3, 2], "byteOffset": 8, "byteLength": 24}
        },
    }
).encode()
FILES = {"model.webnn": GRAPH.encode(), "model.weights": WEIGHTS, "manifest.json": MANIFEST}
MODEL = "tester/tiny-model"


class _Handler(BaseHTTPRequestHandler):
    """Serves ``server.routes``: raw request path (no query) -> (kind, *args)."""

    def do_GET(self):
        srv = self.server
        path = self.path.split("?", 1)[0]
        srv.requests.append({"path": self.path, "headers": dict(self.headers.items())})
        kind, *args = srv.routes.get(path, ("status", 404))
        if kind == "ok":
            (body,) = args
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif kind == "nolength":  # HTTP/1.0 body delimited by closing the connection
            (body,) = args
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)
        elif kind == "truncate":  # promises more than it sends, then hangs up
            body, claimed = args
            self.send_response(200)
            self.send_header("Content-Length", str(claimed))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True
        elif kind == "redirect":
            (location,) = args
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif kind == "hang":
            srv.release.wait(10)
        else:
            (code,) = args
            body = b'{"error": "nope"}'
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, *args):
        pass


class FakeHub:
    """A thread running an http.server on a random 127.0.0.1 port."""

    def __init__(self):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.routes = {}
        self.httpd.requests = []
        self.httpd.release = threading.Event()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def routes(self):
        return self.httpd.routes

    @property
    def requests(self):
        return self.httpd.requests

    def serve_model(self, model_id=MODEL, files=FILES, revision="main"):
        rev = urllib.parse.quote(revision, safe="")
        for name, body in files.items():
            self.routes[f"/{model_id}/resolve/{rev}/{name}"] = ("ok", body)

    def close(self):
        self.httpd.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ("HF_TOKEN", "HF_ENDPOINT", "WEBNN_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    for var in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.upper(), raising=False)
    # Belt and braces: any attempt to connect anywhere but the loopback fails the test.
    real = socket.create_connection

    def loopback_only(address, *args, **kwargs):
        assert address[0] in ("127.0.0.1", "localhost"), f"test tried to reach {address}"
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", loopback_only)


@pytest.fixture
def server(monkeypatch):
    srv = FakeHub()
    monkeypatch.setenv("HF_ENDPOINT", srv.url + "/")  # the trailing '/' must be stripped
    yield srv
    srv.close()


@pytest.fixture
def hub(tmp_path):
    return webnn.Hub(cache_dir=tmp_path / "cache")


def leftovers(directory):
    """Files that are not one of the three model files (temporary or partial downloads)."""
    return sorted(p.name for p in Path(directory).rglob("*") if p.is_file())


# -- exports and construction -----------------------------------------------------------------


def test_exported():
    assert "Hub" in webnn.__all__
    assert webnn.Hub is hub_module.Hub


def test_cache_dir_argument_is_created(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBNN_CACHE_DIR", str(tmp_path / "from-env"))
    h = webnn.Hub(cache_dir=str(tmp_path / "a" / "b"))
    assert isinstance(h.cache_dir, Path)
    assert h.cache_dir == tmp_path / "a" / "b"  # the argument wins over the variable
    assert h.cache_dir.is_dir()
    assert not (tmp_path / "from-env").exists()


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBNN_CACHE_DIR", str(tmp_path / "env-cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    h = webnn.Hub()
    assert h.cache_dir == tmp_path / "env-cache"
    assert h.cache_dir.is_dir()
    assert not (tmp_path / "home").exists()


def test_cache_dir_default_is_home_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WEBNN_CACHE_DIR", "")  # empty means unset
    h = webnn.Hub()
    assert h.cache_dir == tmp_path / "home" / ".cache" / "webnn"
    assert h.cache_dir.is_dir()
    assert h.cache_dir.is_absolute()


def test_endpoint(hub, monkeypatch):
    assert hub.endpoint == "https://huggingface.co"
    assert hub.file_url("a/b", "model.webnn") == (
        "https://huggingface.co/a/b/resolve/main/model.webnn?download=true"
    )
    monkeypatch.setenv("HF_ENDPOINT", "http://mirror.example:8080/hf///")
    assert hub.endpoint == "http://mirror.example:8080/hf"
    assert hub.file_url("a/b", "manifest.json", revision="refs/pr/3") == (
        "http://mirror.example:8080/hf/a/b/resolve/refs%2Fpr%2F3/manifest.json?download=true"
    )
    for bad in ("mirror.example", "file:///etc", "ftp://host/x"):
        monkeypatch.setenv("HF_ENDPOINT", bad)
        with pytest.raises(ValueError, match="HF_ENDPOINT"):
            hub.endpoint  # noqa: B018


# -- downloading ------------------------------------------------------------------------------


def test_download_model(server, hub, capsys):
    server.serve_model()
    paths = hub.download_model(MODEL)
    model_dir = hub.cache_dir / "tester--tiny-model"
    assert paths == {
        "graph": str(model_dir / "model.webnn"),
        "weights": str(model_dir / "model.weights"),
        "manifest": str(model_dir / "manifest.json"),
    }
    assert list(paths) == ["graph", "weights", "manifest"]
    for key, name in (("graph", "model.webnn"), ("weights", "model.weights")):
        assert Path(paths[key]).read_bytes() == FILES[name]
    assert Path(paths["manifest"]).read_bytes() == MANIFEST
    assert leftovers(model_dir) == ["manifest.json", "model.webnn", "model.weights"]
    # URL layout, order, and no token unless HF_TOKEN is set.
    assert [r["path"] for r in server.requests] == [
        f"/{MODEL}/resolve/main/model.webnn?download=true",
        f"/{MODEL}/resolve/main/model.weights?download=true",
        f"/{MODEL}/resolve/main/manifest.json?download=true",
    ]
    assert all("Authorization" not in r["headers"] for r in server.requests)
    out = capsys.readouterr().out
    assert "\r" not in out  # no progress bar when stdout is not a TTY
    assert out.splitlines() == [
        f"   [DOWNLOAD] model.webnn from {MODEL}",
        f"   [OK] Downloaded model.webnn ({len(GRAPH) / 2**20:.2f} MB)",
        f"   [DOWNLOAD] model.weights from {MODEL}",
        "   [OK] Downloaded model.weights (0.00 MB)",
        f"   [DOWNLOAD] manifest.json from {MODEL}",
        "   [OK] Downloaded manifest.json (0.00 MB)",
    ]


def test_download_large_file_in_chunks_reports_megabytes(server, hub, capsys):
    big = bytes(range(256)) * (3 * 2**20 // 256 + 7)  # a little over 3 MiB: several chunks
    server.serve_model(files={**FILES, "model.weights": big})
    paths = hub.download_model(MODEL)
    assert Path(paths["weights"]).read_bytes() == big
    assert (
        f"   [OK] Downloaded model.weights ({len(big) / 2**20:.2f} MB)" in capsys.readouterr().out
    )


def test_cached_files_are_not_fetched_again(server, hub, capsys):
    server.serve_model()
    first = hub.download_model(MODEL)
    capsys.readouterr()
    server.requests.clear()
    assert hub.download_model(MODEL) == first
    assert server.requests == []
    assert capsys.readouterr().out.splitlines() == [
        "   [CACHED] model.webnn",
        "   [CACHED] model.weights",
        "   [CACHED] manifest.json",
    ]
    # Only the missing file is fetched.
    os.remove(first["manifest"])
    hub.download_model(MODEL)
    assert [r["path"] for r in server.requests] == [
        f"/{MODEL}/resolve/main/manifest.json?download=true"
    ]


def test_force_downloads_again(server, hub):
    server.serve_model()
    paths = hub.download_model(MODEL)
    new_weights = WEIGHTS + b"\0" * 8
    server.serve_model(files={**FILES, "model.weights": new_weights})
    server.requests.clear()
    assert hub.download_model(MODEL, force=True) == paths
    assert len(server.requests) == 3
    assert Path(paths["weights"]).read_bytes() == new_weights
    assert leftovers(hub.cache_dir) == ["manifest.json", "model.webnn", "model.weights"]


def test_revision(server, tmp_path):
    server.serve_model()
    v2 = {**FILES, "model.weights": WEIGHTS + b"v2"}
    server.serve_model(files=v2, revision="v2.0")
    h = webnn.Hub(cache_dir=tmp_path / "c")
    main = h.download_model(MODEL)
    tagged = h.download_model(MODEL, revision="v2.0")
    assert [r["path"] for r in server.requests][3:] == [
        f"/{MODEL}/resolve/v2.0/{name}?download=true"
        for name in ("model.webnn", "model.weights", "manifest.json")
    ]
    # The two revisions are cached apart, under the model's directory.
    assert Path(main["weights"]).read_bytes() == WEIGHTS
    assert Path(tagged["weights"]).read_bytes() == WEIGHTS + b"v2"
    assert Path(tagged["graph"]).parent == h.cache_dir / "tester--tiny-model/revisions/v2.0"
    assert h.list_cached_models() == [MODEL]
    # A revision with '/' is one URL path segment.
    server.serve_model(revision="refs/pr/7")
    server.requests.clear()
    h.download_model(MODEL, revision="refs/pr/7")
    assert server.requests[0]["path"] == f"/{MODEL}/resolve/refs%2Fpr%2F7/model.webnn?download=true"
    # The constructor's revision is the default of download_model.
    server.requests.clear()
    h2 = webnn.Hub(cache_dir=tmp_path / "c2", revision="v2.0")
    assert Path(h2.download_model(MODEL)["weights"]).read_bytes() == WEIGHTS + b"v2"
    assert all("/resolve/v2.0/" in r["path"] for r in server.requests)
    for bad in ("", "a/../b", "/main", "has space", "x?y"):
        with pytest.raises(ValueError, match="revision"):
            h.download_model(MODEL, revision=bad)


def test_hf_token_sent(server, hub, monkeypatch):
    server.serve_model()
    monkeypatch.setenv("HF_TOKEN", "hf_secret123")
    hub.download_model(MODEL)
    assert len(server.requests) == 3
    assert all(r["headers"].get("Authorization") == "Bearer hf_secret123" for r in server.requests)
    assert all(r["headers"].get("User-Agent") for r in server.requests)


def test_token_follows_same_origin_redirects_only(server, hub, monkeypatch):
    other = FakeHub()  # another port = another origin (a CDN, say)
    try:
        other.routes["/blob/weights"] = ("ok", WEIGHTS)
        server.serve_model()
        base = f"/{MODEL}/resolve/main"
        server.routes[f"{base}/model.webnn"] = ("redirect", "/renamed/model.webnn")
        server.routes["/renamed/model.webnn"] = ("ok", GRAPH.encode())
        server.routes[f"{base}/model.weights"] = ("redirect", other.url + "/blob/weights")
        monkeypatch.setenv("HF_TOKEN", "tok")
        paths = hub.download_model(MODEL)
        assert Path(paths["graph"]).read_text() == GRAPH
        assert Path(paths["weights"]).read_bytes() == WEIGHTS
        seen = {r["path"].split("?")[0]: r["headers"] for r in server.requests}
        assert seen["/renamed/model.webnn"].get("Authorization") == "Bearer tok"
        assert len(other.requests) == 1
        assert "Authorization" not in other.requests[0]["headers"]
    finally:
        other.close()


def test_body_without_content_length(server, hub):
    server.serve_model()
    server.routes[f"/{MODEL}/resolve/main/model.weights"] = ("nolength", WEIGHTS)
    paths = hub.download_model(MODEL)
    assert Path(paths["weights"]).read_bytes() == WEIGHTS


def test_progress_bar_on_a_terminal(server, hub, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    big = b"\1" * (2 * 2**20 + 5)
    server.serve_model(files={**FILES, "model.weights": big})
    tty = Tty()
    monkeypatch.setattr(sys, "stdout", tty)
    hub.download_model(MODEL)
    text = tty.getvalue()
    assert "\r   [##############################] 100.0%" in text
    assert "2.00/2.00 MB" in text
    # The bar is erased before the [OK] line, which starts at column 0.
    lines = [ln.split("\r")[-1] for ln in text.split("\n")]
    assert "   [OK] Downloaded model.weights (2.00 MB)" in lines
    assert "   [DOWNLOAD] model.weights from tester/tiny-model" in lines


def test_quiet(server, tmp_path, capsys):
    server.serve_model()
    h = webnn.Hub(cache_dir=tmp_path / "q", quiet=True)
    h.download_model(MODEL)
    h.download_model(MODEL)
    h.clear_cache()
    assert capsys.readouterr().out == ""


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [404, 401, 403, 500])
def test_http_errors(server, hub, code):
    server.serve_model()
    server.routes[f"/{MODEL}/resolve/main/model.weights"] = ("status", code)
    url = f"{server.url}/{MODEL}/resolve/main/model.weights?download=true"
    with pytest.raises(RuntimeError) as info:
        hub.download_model(MODEL)
    msg = str(info.value)
    assert "weights" in msg and url in msg and str(code) in msg
    assert isinstance(info.value.__cause__, urllib.error.HTTPError)
    assert info.value.__cause__.code == code
    # Nothing is left behind, not even the graph that arrived before: files are staged and
    # enter the cache together (a later download never pairs them with another revision's).
    assert leftovers(hub.cache_dir) == []


def test_missing_graph_names_graph(server, hub):
    with pytest.raises(RuntimeError, match=r"graph .*404") as info:
        hub.download_model(MODEL)
    assert f"{server.url}/{MODEL}/resolve/main/model.webnn?download=true" in str(info.value)
    assert info.value.__cause__ is not None
    # The model directory created for the download does not outlive it.
    assert list(hub.cache_dir.iterdir()) == []
    assert hub.list_cached_models() == []
    # Same for a revision directory, while the model's other files stay.
    server.serve_model()
    hub.download_model(MODEL)
    with pytest.raises(RuntimeError, match="404"):
        hub.download_model(MODEL, revision="nope")
    assert not (hub.cache_dir / "tester--tiny-model" / "revisions").exists()
    assert leftovers(hub.cache_dir) == ["manifest.json", "model.webnn", "model.weights"]


def test_connection_refused(tmp_path, monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    h = webnn.Hub(cache_dir=tmp_path / "c")
    with pytest.raises(RuntimeError) as info:
        h.download_model(MODEL)
    assert "graph" in str(info.value)
    assert f"http://127.0.0.1:{port}/{MODEL}/resolve/main/model.webnn" in str(info.value)
    cause = info.value.__cause__
    assert isinstance(cause, OSError)  # URLError wrapping ConnectionRefusedError
    assert isinstance(getattr(cause, "reason", cause), ConnectionRefusedError)
    assert h.list_cached_models() == []


def test_timeout(server, tmp_path):
    server.serve_model()
    server.routes[f"/{MODEL}/resolve/main/model.weights"] = ("hang",)
    h = webnn.Hub(cache_dir=tmp_path / "c", timeout=0.3)
    with pytest.raises(RuntimeError, match="weights") as info:
        h.download_model(MODEL)
    assert isinstance(info.value.__cause__, OSError)
    assert leftovers(h.cache_dir) == []


def test_interrupted_download_leaves_nothing(server, hub):
    server.serve_model()
    server.routes[f"/{MODEL}/resolve/main/model.weights"] = ("truncate", WEIGHTS[:10], 10_000)
    with pytest.raises(RuntimeError, match="interrupted") as info:
        hub.download_model(MODEL)
    assert "weights" in str(info.value)
    assert f"{server.url}/{MODEL}/resolve/main/model.weights" in str(info.value)
    assert "10 of 10000 bytes" in str(info.value)
    assert info.value.__cause__ is not None
    assert leftovers(hub.cache_dir) == []  # no partial set, no temp file
    # A later call does not mistake anything for a cached file.
    server.serve_model()
    server.requests.clear()
    paths = hub.download_model(MODEL)
    assert [r["path"].split("/")[-1] for r in server.requests] == [
        "model.webnn?download=true",
        "model.weights?download=true",
        "manifest.json?download=true",
    ]
    assert Path(paths["weights"]).read_bytes() == WEIGHTS


def test_failed_force_download_keeps_the_cached_file(server, hub):
    server.serve_model()
    paths = hub.download_model(MODEL)
    server.routes[f"/{MODEL}/resolve/main/model.weights"] = ("truncate", b"junk", 100)
    with pytest.raises(RuntimeError):
        hub.download_model(MODEL, force=True)
    assert Path(paths["weights"]).read_bytes() == WEIGHTS
    assert leftovers(hub.cache_dir) == ["manifest.json", "model.webnn", "model.weights"]


def test_keyboard_interrupt_leaves_nothing(server, hub, monkeypatch):
    server.serve_model(files={**FILES, "model.weights": b"\2" * (3 * 2**20)})

    def interrupt(self, done, final=False):
        raise KeyboardInterrupt

    hub.download_model(MODEL)
    monkeypatch.setattr(hub_module._Progress, "update", interrupt)
    with pytest.raises(KeyboardInterrupt):
        hub.download_model(MODEL, force=True)
    # The cached copy survives an interrupted forced download.
    assert leftovers(hub.cache_dir) == ["manifest.json", "model.webnn", "model.weights"]
    assert (hub.cache_dir / "tester--tiny-model" / "model.webnn").read_text() == GRAPH
    hub.clear_cache(MODEL)
    with pytest.raises(KeyboardInterrupt):
        hub.download_model(MODEL)
    assert leftovers(hub.cache_dir) == []


@pytest.mark.parametrize(
    "body, what",
    [(b"", "empty"), (b"  \n", "empty"), (b"<html>not found</html>", "no 'input'")],
)
def test_invalid_graph_file(server, hub, body, what):
    server.serve_model(files={**FILES, "model.webnn": body})
    with pytest.raises(RuntimeError, match="^Invalid graph file") as info:
        hub.download_model(MODEL)
    assert what in str(info.value)
    # Checked before it enters the cache, and before the (large) weights are fetched.
    assert leftovers(hub.cache_dir) == []
    assert len(server.requests) == 1


def test_invalid_cached_graph_file(server, hub):
    server.serve_model()
    model_dir = hub.cache_dir / "tester--tiny-model"
    model_dir.mkdir()
    (model_dir / "model.webnn").write_text("garbage")  # e.g. a partial file from another tool
    with pytest.raises(RuntimeError, match="^Invalid graph file.*force=True"):
        hub.download_model(MODEL)
    assert server.requests == []
    paths = hub.download_model(MODEL, force=True)
    assert Path(paths["graph"]).read_text() == GRAPH


@pytest.mark.parametrize(
    "model_id",
    [
        "no-slash",
        "",
        "/abs",
        "owner/",
        "/",
        "a//b",
        "a/b/c",
        "../etc",
        "owner/..",
        "./x",
        "..\\x/y",
        "a/b c",
        "a/b?x=1",
        "a/b#c",
        "a/%2e%2e",
        "C:/x",
    ],
)
def test_bad_model_ids(server, hub, model_id):
    with pytest.raises(ValueError, match="model id"):
        hub.download_model(model_id)
    assert server.requests == []
    assert leftovers(hub.cache_dir) == []
    assert list(hub.cache_dir.iterdir()) == []


def test_model_id_error_names_expected_form(hub):
    with pytest.raises(ValueError, match="username/model-name"):
        hub.download_model("mobilenet")
    with pytest.raises(TypeError):
        hub.download_model(None)


# -- cache listing and clearing ---------------------------------------------------------------


def test_list_cached_models(server, hub):
    assert hub.list_cached_models() == []
    for name in ("zed--model", "alpha--b", "mid--x--y"):
        (hub.cache_dir / name).mkdir()
    (hub.cache_dir / "stray-file").write_text("x")  # files are not models
    assert hub.list_cached_models() == ["alpha/b", "mid/x/y", "zed/model"]
    server.serve_model()
    hub.download_model(MODEL)
    assert hub.list_cached_models() == ["alpha/b", "mid/x/y", MODEL, "zed/model"]


def test_list_cached_models_without_root(hub):
    hub.clear_cache()
    assert not hub.cache_dir.exists()
    assert hub.list_cached_models() == []


def test_clear_cache_one_model(server, hub, capsys):
    server.serve_model()
    server.serve_model(model_id="other/model")
    hub.download_model(MODEL)
    hub.download_model("other/model")
    capsys.readouterr()
    hub.clear_cache(MODEL)
    assert capsys.readouterr().out == f"Cleared cache for: {MODEL}\n"
    assert hub.list_cached_models() == ["other/model"]
    assert not (hub.cache_dir / "tester--tiny-model").exists()
    hub.clear_cache("never/downloaded")  # silently ignored
    assert capsys.readouterr().out == ""
    for bad in ("..", "", "../x\\y"):
        with pytest.raises(ValueError):
            hub.clear_cache(bad)
    assert hub.list_cached_models() == ["other/model"]
    assert hub.cache_dir.parent.exists()


def test_clear_cache_all(server, hub, capsys):
    server.serve_model()
    hub.download_model(MODEL)
    capsys.readouterr()
    hub.clear_cache(None)
    assert capsys.readouterr().out == f"Cleared cache: {hub.cache_dir}\n"
    assert not hub.cache_dir.exists()  # not re-created
    hub.clear_cache()  # nothing to do, no output
    assert capsys.readouterr().out == ""
    # Downloading again recreates the directories.
    assert Path(hub.download_model(MODEL)["graph"]).is_file()


# -- end to end -------------------------------------------------------------------------------


def test_downloaded_model_loads_and_runs(server, hub):
    server.serve_model()
    paths = hub.download_model(MODEL)
    ctx = webnn.ML().create_context(accelerated=False)
    try:
        graph = ctx.load_graph(paths["graph"])
    except NotImplementedError as exc:
        pytest.skip(f"load_graph not available in this build: {exc}")
    x = ctx.create_tensor([2, 3], "float32", writable=True)
    y = ctx.create_tensor([2, 2], "float32", readable=True)
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    ctx.write_tensor(x, xv)
    ctx.dispatch(graph, {"x": x}, {"y": y})
    np.testing.assert_allclose(ctx.read_tensor(y), xv @ W)
