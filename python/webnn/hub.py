"""webnn.Hub: download pre-converted WebNN models from the Hugging Face Hub (spec/api.md §13).

Pure Python (``urllib`` only). A model is three files, ``model.webnn``, ``model.weights`` and
``manifest.json``, cached under ``<cache>/<owner>--<name>/`` so that
``MLContext.load_graph(paths["graph"])`` finds the weights next to the graph.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import secrets
import shutil
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

__all__ = ["Hub"]

DEFAULT_ENDPOINT = "https://huggingface.co"
DEFAULT_REVISION = "main"
DEFAULT_TIMEOUT = 30.0

# (key in the returned dict, remote and local file name), in download order.
MODEL_FILES = (
    ("graph", "model.webnn"),
    ("weights", "model.weights"),
    ("manifest", "manifest.json"),
)

_CHUNK_SIZE = 1 << 20
# A download in progress stages its files in <model dir>/.staging-<random>/; the journal
# <model dir>/.commit names the staging directory whose files are being moved into place.
_STAGING_PREFIX = ".staging-"
_JOURNAL = ".commit"
_USER_AGENT = "webnn-python-hub"
_MB = 1024 * 1024
# Hugging Face repository names: letters, digits, '-', '_' and '.'.
_ID_PART = re.compile(r"[A-Za-z0-9_.\-]+")
# Failures of the transfer itself. HTTPError (a URLError) is handled separately; OSError covers
# refused/reset connections, timeouts and TLS errors raised while reading the body.
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, OSError)


def _validate_model_id(model_id) -> str:
    """Returns the cache directory name for ``owner/name``; ValueError on anything else."""
    if not isinstance(model_id, str):
        raise TypeError(f"model_id must be a str, got {type(model_id).__name__}")
    if "/" not in model_id:
        raise ValueError(f"Invalid model id {model_id!r}: expected the form 'username/model-name'")
    parts = model_id.split("/")
    if len(parts) != 2 or not all(parts):
        raise ValueError(
            f"Invalid model id {model_id!r}: expected exactly one '/' between two non-empty "
            "parts, as in 'username/model-name'"
        )
    for part in parts:
        if part in (".", "..") or not _ID_PART.fullmatch(part):
            raise ValueError(
                f"Invalid model id {model_id!r}: each part of 'username/model-name' may only "
                "contain letters, digits, '-', '_' and '.' and must not be '.' or '..'"
            )
    return model_id.replace("/", "--")


def _validate_revision(revision) -> str:
    """Returns the revision unchanged after checking it is a plausible git ref or commit."""
    if not isinstance(revision, str):
        raise TypeError(f"revision must be a str, got {type(revision).__name__}")
    if not revision or any(part in ("", ".", "..") for part in revision.split("/")):
        raise ValueError(f"Invalid revision {revision!r}")
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F or ch in "\\?#" for ch in revision):
        raise ValueError(f"Invalid revision {revision!r}")
    return revision


def _default_cache_dir() -> Path:
    env = os.environ.get("WEBNN_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "webnn"


def _origin(url: str):
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), parts.hostname, parts.port


class _RedirectHandler(urllib.request.HTTPRedirectHandler):
    """Keeps the Authorization header on same-origin redirects only.

    The token is added as an "unredirected" header, which urllib never forwards; here it is put
    back when the redirect stays on the same scheme/host/port (e.g. a renamed repository), and
    dropped when it leaves (e.g. the signed CDN URL of a large file).
    """

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        auth = req.unredirected_hdrs.get("Authorization")
        if new is not None and auth and _origin(new.full_url) == _origin(req.full_url):
            new.add_unredirected_header("Authorization", auth)
        return new


class _Progress:
    """Progress of one file: a redrawn bar on a terminal, nothing otherwise."""

    def __init__(self, out, total, enabled):
        self._out = out
        self._total = total
        self._enabled = enabled
        self._start = time.monotonic()
        self._last = 0.0
        self._drawn = False

    def update(self, done, final=False):
        if not self._enabled:
            return
        now = time.monotonic()
        if not final and now - self._last < 0.1:
            return
        self._last = now
        rate = done / max(now - self._start, 1e-6) / _MB
        if self._total:
            frac = min(done / self._total, 1.0)
            filled = int(frac * 30)
            bar = "#" * filled + "." * (30 - filled)
            line = (
                f"   [{bar}] {frac * 100:5.1f}% {done / _MB:.2f}/{self._total / _MB:.2f} MB"
                f" {rate:.2f} MB/s"
            )
        else:
            line = f"   {done / _MB:.2f} MB {rate:.2f} MB/s"
        self._out.write("\r" + line.ljust(79))
        self._out.flush()
        self._drawn = True

    def close(self):
        """Erases the bar so that the next line starts at column 0."""
        if self._drawn:
            self._out.write("\r" + " " * 79 + "\r")
            self._out.flush()
            self._drawn = False


class Hub:
    """Downloads and caches pre-converted WebNN models from the Hugging Face Hub.

    Args:
        cache_dir: cache root. Default: ``$WEBNN_CACHE_DIR`` if set and non-empty, else
            ``~/.cache/webnn``. Created (with parents) immediately.
        revision: default branch, tag or commit for :meth:`download_model` (``"main"``).
        timeout: socket timeout in seconds for connecting and for each read.
        quiet: print nothing (by default progress lines go to stdout).

    Environment: ``HF_ENDPOINT`` (base URL, default ``https://huggingface.co``), ``HF_TOKEN``
    (sent as ``Authorization: Bearer <token>``), and the usual proxy variables.
    """

    def __init__(
        self,
        cache_dir=None,
        *,
        revision: str = DEFAULT_REVISION,
        timeout: float = DEFAULT_TIMEOUT,
        quiet: bool = False,
    ):
        if cache_dir is None:
            self.cache_dir = _default_cache_dir()
        else:
            self.cache_dir = Path(cache_dir).expanduser()
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.revision = _validate_revision(revision)
        self.timeout = timeout
        self.quiet = quiet
        self._opener = urllib.request.build_opener(_RedirectHandler)

    def __repr__(self):
        return f"Hub(cache_dir={str(self.cache_dir)!r})"

    # -- configuration read at call time, so that environment changes take effect -----------

    @property
    def endpoint(self) -> str:
        """Base URL: ``$HF_ENDPOINT`` without trailing ``/``, or ``https://huggingface.co``."""
        base = (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        parts = urllib.parse.urlsplit(base)
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            raise ValueError(f"HF_ENDPOINT must be an http:// or https:// URL, got {base!r}")
        return base

    def file_url(self, model_id: str, filename: str, revision: str | None = None) -> str:
        """``{endpoint}/{model_id}/resolve/{revision}/{filename}?download=true``."""
        _validate_model_id(model_id)
        revision = _validate_revision(self.revision if revision is None else revision)
        return (
            f"{self.endpoint}/{model_id}/resolve/{urllib.parse.quote(revision, safe='')}/"
            f"{urllib.parse.quote(filename)}?download=true"
        )

    def model_dir(self, model_id: str, revision: str | None = None) -> Path:
        """Local directory of a model: ``<cache>/<owner>--<name>``.

        Revisions other than ``main`` live in ``<model dir>/revisions/<quoted revision>`` so that
        they never mix with the files of ``main``.
        """
        path = self.cache_dir / _validate_model_id(model_id)
        revision = _validate_revision(self.revision if revision is None else revision)
        if revision != DEFAULT_REVISION:
            path = path / "revisions" / urllib.parse.quote(revision, safe="")
        return path

    # -- public API -------------------------------------------------------------------------

    def download_model(self, model_id: str, force: bool = False, *, revision=None) -> dict:
        """Downloads ``model.webnn``, ``model.weights`` and ``manifest.json`` of a model.

        Files already in the cache are kept unless ``force`` is true. Returns
        ``{"graph": path, "weights": path, "manifest": path}`` (path strings).

        Raises:
            ValueError: ``model_id`` is not ``username/model-name`` (or is unsafe as a path),
                the revision or ``HF_ENDPOINT`` is invalid.
            RuntimeError: HTTP error, network error, timeout or truncated download (the
                message names the file and URL; the original exception is ``__cause__``), or
                the graph file fails the sanity check (``Invalid graph file``).
        """
        revision = _validate_revision(self.revision if revision is None else revision)
        model_dir = self.model_dir(model_id, revision)
        # Directories created here are removed again if they stay empty (a failed first
        # download), so that list_cached_models does not report a model that is not there.
        created = [d for d in (model_dir, *model_dir.parents) if not d.exists()]
        model_dir.mkdir(parents=True, exist_ok=True)
        try:
            return self._download_files(model_id, revision, model_dir, force)
        except BaseException:
            for d in created:  # deepest first
                try:
                    d.rmdir()
                except OSError:
                    break
            raise

    def _download_files(self, model_id, revision, model_dir, force):
        """The body of download_model, once the model directory exists.

        The files to fetch are staged in a hidden directory next to the cached ones and only
        then moved into place, under a journal (``.commit``) naming that directory: a download
        killed at any point leaves the old set, or a journal that the next call completes to
        the new set. Files of two revisions are never paired.
        """
        with _commit_lock(model_dir):
            _finish_commit(model_dir)
            _remove_abandoned_staging(model_dir)
        paths, wanted = {}, []
        for key, filename in MODEL_FILES:
            path = model_dir / filename
            paths[key] = str(path)
            if path.exists() and not force:
                self._print(f"   [CACHED] {filename}")
                if key == "graph":
                    _check_graph(path, f"{path} (cached; download again with force=True)")
                continue
            wanted.append((key, filename))
        if not wanted:
            return paths
        staging = model_dir / f"{_STAGING_PREFIX}{secrets.token_hex(6)}"
        staging.mkdir()
        try:
            for key, filename in wanted:
                url = self.file_url(model_id, filename, revision)
                self._print(f"   [DOWNLOAD] {filename} from {model_id}")
                size = self._download(key, url, staging / filename, check_graph=key == "graph")
                self._print(f"   [OK] Downloaded {filename} ({size / _MB:.2f} MB)")
            with _commit_lock(model_dir):
                _write_journal(model_dir, staging.name)
                _finish_commit(model_dir)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return paths

    def list_cached_models(self) -> list:
        """Sorted model ids of the directories in the cache root (``--`` shown as ``/``)."""
        if not self.cache_dir.is_dir():
            return []
        return sorted(p.name.replace("--", "/") for p in self.cache_dir.iterdir() if p.is_dir())

    def clear_cache(self, model_id: str | None = None) -> None:
        """Deletes one model's directory, or the whole cache root when ``model_id`` is None."""
        if model_id is None:
            if self.cache_dir.exists():
                shutil.rmtree(self.cache_dir)
                self._print(f"Cleared cache: {self.cache_dir}")
            return
        if not isinstance(model_id, str):
            raise TypeError(f"model_id must be a str or None, got {type(model_id).__name__}")
        # Accept every id list_cached_models can return, but never a path leaving the cache.
        name = model_id.replace("/", "--")
        if (
            not model_id
            or name in (".", "..")
            or "\\" in name
            or "\x00" in name
            or (os.altsep and os.altsep in name)
        ):
            raise ValueError(f"Invalid model id {model_id!r}")
        path = self.cache_dir / name
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        else:
            return
        self._print(f"Cleared cache for: {model_id}")

    # -- internals --------------------------------------------------------------------------

    def _print(self, line):
        if not self.quiet:
            print(line, flush=True)

    def _request(self, url):
        req = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
        token = (os.environ.get("HF_TOKEN") or "").strip()
        if token:
            req.add_unredirected_header("Authorization", f"Bearer {token}")
        return req

    def _download(self, key, url, dest: Path, check_graph=False) -> int:
        """Streams ``url`` into a temporary file next to ``dest``, then renames it.

        With ``check_graph`` the sanity check runs before the rename, so an invalid graph never
        enters the cache. Returns the number of bytes written. Whatever goes wrong (including
        KeyboardInterrupt), the temporary file is removed and ``dest`` is left untouched.
        """

        def fail(what):
            return RuntimeError(f"Failed to download {key} ({dest.name}) from {url}: {what}")

        try:
            resp = self._opener.open(self._request(url), timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            exc.close()
            raise fail(f"HTTP {exc.code} {exc.reason}") from exc
        except _NETWORK_ERRORS as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise fail(f"network error: {reason}") from exc

        tmp = dest.with_name(f".{dest.name}.{secrets.token_hex(6)}.part")
        progress = None
        try:
            with resp:
                total = _content_length(resp)
                stdout = sys.stdout
                tty = not self.quiet and stdout is not None and _isatty(stdout)
                progress = _Progress(stdout, total, tty)
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
                # 0o666 minus the umask, like any other file the user creates.
                with os.fdopen(os.open(tmp, flags, 0o666), "wb") as out:
                    done = 0
                    while True:
                        try:
                            chunk = resp.read(_CHUNK_SIZE)
                        except _NETWORK_ERRORS as exc:
                            raise fail(f"interrupted after {done} bytes: {exc!r}") from exc
                        if not chunk:
                            break
                        out.write(chunk)
                        done += len(chunk)
                        progress.update(done)
                    if total is not None and done != total:
                        short = ConnectionError(f"received {done} of {total} bytes")
                        raise fail(f"interrupted download, {short}") from short
                    out.flush()
                    os.fsync(out.fileno())
                progress.update(done, final=True)
                progress.close()
            if check_graph:
                _check_graph(tmp, f"downloaded from {url}")
            os.replace(tmp, dest)
            return done
        finally:
            if progress is not None:
                progress.close()
            if tmp.exists():
                try:
                    tmp.unlink()
                except OSError:
                    pass


def _fsync_dir(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # e.g. Windows: directories cannot be opened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_THREAD_LOCKS: dict = {}
_THREAD_LOCKS_GUARD = threading.Lock()


@contextlib.contextmanager
def _commit_lock(model_dir):
    """Excludes other downloads of the same model directory, in this process and in others,
    while one journals and moves its files into place: two commits at once read one journal,
    both moved its files and both removed it (FileNotFoundError from every download but one).
    The downloads themselves run in parallel, each in its own staging directory."""
    key = os.path.abspath(model_dir)
    with _THREAD_LOCKS_GUARD:
        in_process = _THREAD_LOCKS.setdefault(key, threading.Lock())
    with in_process:
        try:
            import fcntl
        except ImportError:  # Windows: other processes are not excluded
            yield
            return
        fd = os.open(model_dir, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:  # a file system without flock: the journal is the safeguard
                pass
            yield
        finally:
            os.close(fd)  # releases the flock


def _write_journal(model_dir, staging_name):
    """Atomically records that the files of `staging_name` are to replace the cached ones."""
    tmp = model_dir / f"{_JOURNAL}.{secrets.token_hex(6)}.part"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(staging_name + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, model_dir / _JOURNAL)
    _fsync_dir(model_dir)


def _finish_commit(model_dir):
    """Completes a journaled commit (a download killed while moving its files into place)."""
    journal = model_dir / _JOURNAL
    try:
        name = journal.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return
    staging = model_dir / name
    if name.startswith(_STAGING_PREFIX) and "/" not in name and "\\" not in name:
        for _, filename in MODEL_FILES:
            staged = staging / filename
            if staged.exists():
                os.replace(staged, model_dir / filename)
        _fsync_dir(model_dir)
        shutil.rmtree(staging, ignore_errors=True)
    journal.unlink()
    _fsync_dir(model_dir)


def _remove_abandoned_staging(model_dir, older_than_s=3600.0):
    """Staging directories of downloads killed before their journal (an hour old: a younger
    one may belong to a download running in another process)."""
    now = time.time()
    for d in model_dir.glob(_STAGING_PREFIX + "*"):
        try:
            if now - d.stat().st_mtime > older_than_s:
                shutil.rmtree(d, ignore_errors=True)
        except OSError:
            pass


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _content_length(resp):
    value = resp.headers.get("Content-Length")
    if value is None or resp.headers.get("Transfer-Encoding"):
        return None
    try:
        length = int(value)
    except ValueError:
        return None
    return length if length >= 0 else None


def _check_graph(path, where):
    """The sanity check of spec §13: non-empty text containing ``input``. No parsing."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    if text.strip() and "input" in text:
        return
    what = "it is empty" if not text.strip() else "it does not look like a WebNN graph (no 'input')"
    raise RuntimeError(f"Invalid graph file model.webnn {where}: {what}")
