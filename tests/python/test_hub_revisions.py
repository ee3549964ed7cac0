"""A forced Hub re-download never pairs files of two revisions, wherever it is killed."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import webnn
from test_hub import FILES, MODEL, FakeHub, clean_env  # noqa: F401 - the autouse fixture

OLD = FILES
NEW = {
    "model.webnn": FILES["model.webnn"].replace(b'"hub_test"', b'"hub_test_v2"'),
    "model.weights": FILES["model.weights"][:-4] + b"\x00\x00\x80\x3f",
    "manifest.json": FILES["manifest.json"].replace(b'"version": 1', b'"version": 1 '),
}

# Kills itself (SIGKILL) at the N-th os.replace of webnn.hub: every rename of a forced download
# (each file into the staging directory, the journal, each file into place) is one point.
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import webnn
    from webnn import hub as hub_module

    calls = [0]
    real = os.replace

    def replace(src, dst):
        calls[0] += 1
        if calls[0] == int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)
        real(src, dst)

    hub_module.os.replace = replace
    webnn.Hub(cache_dir=sys.argv[1], quiet=True).download_model(sys.argv[2], force=True)
    print("finished", calls[0])
    """
)


def model_files(model_dir):
    return {name: (model_dir / name).read_bytes() for name in OLD if (model_dir / name).exists()}


@pytest.fixture
def server(monkeypatch):
    srv = FakeHub()
    monkeypatch.setenv("HF_ENDPOINT", srv.url)
    yield srv
    srv.close()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_forced_download_killed_at_every_rename_leaves_old_or_new(server, tmp_path):
    cache = tmp_path / "cache"
    hub = webnn.Hub(cache_dir=cache, quiet=True)
    model_dir = cache / MODEL.replace("/", "--")
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["HF_ENDPOINT"] = server.url
    outcomes = []
    for kill_at in range(1, 10):
        server.serve_model(files=OLD)
        hub.download_model(MODEL, force=True)
        assert model_files(model_dir) == OLD
        server.serve_model(files=NEW)
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(cache), MODEL, str(kill_at)],
            check=False, capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        killed = child.returncode == -signal.SIGKILL
        assert killed or child.returncode == 0, child.stderr
        # The next call (nothing can be fetched now) completes or forgets the killed download.
        server.routes.clear()
        paths = hub.download_model(MODEL)
        files = model_files(model_dir)
        assert files in (OLD, NEW), f"killed at rename {kill_at}: files of two revisions"
        assert {Path(p).name for p in paths.values()} == set(OLD)
        assert not (model_dir / ".commit").exists()
        outcomes.append("new" if files == NEW else "old")
        if not killed:
            break
    # Early kills keep the old set, kills after the journal complete to the new one.
    assert "old" in outcomes and "new" in outcomes, outcomes
    assert outcomes == sorted(outcomes, key=lambda o: o == "new"), outcomes
    ctx = webnn.ML().create_context(accelerated=False, backend="reference")
    ctx.load_graph(str(model_dir / "model.webnn"))  # the final pair loads (weights record ok)


def test_failed_forced_download_keeps_the_old_set(server, tmp_path):
    hub = webnn.Hub(cache_dir=tmp_path / "cache", quiet=True)
    server.serve_model(files=OLD)
    paths = hub.download_model(MODEL)
    server.serve_model(files=NEW)  # the new graph arrives, its weights are cut off
    server.routes[f"/{MODEL}/resolve/main/model.weights"] = ("truncate", b"junk", 100)
    with pytest.raises(RuntimeError, match="model.weights"):
        hub.download_model(MODEL, force=True)
    assert {k: Path(p).read_bytes() for k, p in paths.items()} == {
        "graph": OLD["model.webnn"],
        "weights": OLD["model.weights"],
        "manifest": OLD["manifest.json"],
    }
    assert sorted(p.name for p in Path(paths["graph"]).parent.iterdir()) == sorted(OLD)
