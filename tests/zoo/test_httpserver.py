"""A local HTTP server for zoo download tests, with fault injection, and helpers.

`ZooServer` serves in-memory files on 127.0.0.1 with HTTP Range support and can be told to
cut the connection mid-file once, serve tampered bytes, ignore Range, or answer 503 once.
It records every request (path and Range header). The tests at the bottom check the server
itself, so download tests can rely on it.
"""

import hashlib
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        server = self.server
        range_header = self.headers.get("Range")
        with server.lock:
            server.requests.append({"path": self.path, "range": range_header})
            fail_status, server.fail_once_status = server.fail_once_status, None
            cut_after, server.cut_after = server.cut_after, None
        if fail_status is not None:
            self.send_response(fail_status)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = server.files.get(self.path)
        if data is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if server.tamper:
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        start = 0
        if range_header and not server.ignore_range:
            start = int(range_header.removeprefix("bytes=").split("-")[0])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "none" if server.ignore_range else "bytes")
        self.end_headers()
        if cut_after is not None:
            self.wfile.write(body[:cut_after])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        for offset in range(0, len(body), server.chunk):
            self.wfile.write(body[offset : offset + server.chunk])
            if server.delay:
                time.sleep(server.delay)


class ZooServer(ThreadingHTTPServer):
    """Serves `files` (URL path -> bytes) on 127.0.0.1 with switchable faults.

    Attributes set by tests: `cut_after` (bytes sent before cutting the connection, once),
    `tamper` (flip the first byte), `ignore_range` (always 200), `fail_once_status`
    (answer this status once), `delay` (seconds per `chunk` bytes). `requests` records
    `{"path", "range"}` of every request.
    """

    daemon_threads = True

    def __init__(self, files):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files = dict(files)
        self.requests = []
        self.lock = threading.Lock()
        self.cut_after = None
        self.tamper = False
        self.ignore_range = False
        self.fail_once_status = None
        self.delay = 0.0
        self.chunk = 1 << 14
        self._thread = None

    def url(self, path=""):
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def start(self):
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self):
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)

    def requests_for(self, path):
        with self.lock:
            return [r for r in self.requests if r["path"] == path]


def file_entry(filename, data, url=None, path=None):
    """Returns a card file entry for `data`."""
    entry = {"filename": filename, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    if url is not None:
        entry["url"] = url
    if path is not None:
        entry["path"] = path
    return entry


def make_card(name, files, **overrides):
    """Returns a valid published card dict with `files`; `overrides` replace fields."""
    primary = files[0]["filename"] if files else "model.keras"
    card = {
        "schema_version": 1,
        "name": name,
        "status": "published",
        "method": "baseline",
        "backbone": "convnet",
        "model": {"file": primary},
        "preprocessing": {"input_size": [8, 8], "pixel_range": [0, 255]},
        "training": {"dataset": "cub200", "protocol": "first 100 classes train / last 100 test"},
        "metrics": {
            "dataset": "cub200",
            "split": "test",
            "command": "keras-dml evaluate --model tiny",
            "values": {"recall@1": 0.5},
        },
        "license": "Apache-2.0",
        "files": files,
    }
    card.update(overrides)
    return card


def write_card(directory, card, filename=None):
    """Writes `card` to `directory/<name>.json` (or `filename`) and returns the path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (filename or f"{card['name']}.json")
    path.write_text(json.dumps(card, indent=2))
    return path


def isolate_zoo(monkeypatch, tmp_path):
    """Points the zoo at empty card/cache folders under `tmp_path`; returns (cards, cache)."""
    from keras_dml.zoo import registry

    cards, cache = tmp_path / "cards", tmp_path / "keras_home"
    cards.mkdir()
    monkeypatch.setenv("KERAS_DML_MODELS_DIR", str(cards))
    monkeypatch.setenv("KERAS_HOME", str(cache))
    monkeypatch.delenv("KERAS_DML_MIRROR", raising=False)
    monkeypatch.setattr(registry, "_PACKAGE_CARDS", tmp_path / "no_package_cards")
    monkeypatch.setattr(registry, "_REPOSITORY_MODELS", tmp_path / "no_repo_models")
    return cards, cache


@pytest.fixture
def server():
    srv = ZooServer({"/a.bin": bytes(range(256)) * 40}).start()
    yield srv
    srv.stop()


def _get(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.headers, response.read()


def test_server_serves_ranges(server):
    data = server.files["/a.bin"]
    status, headers, body = _get(server.url("/a.bin"), {"Range": "bytes=100-"})
    assert status == 206
    assert body == data[100:]
    assert headers["Content-Range"] == f"bytes 100-{len(data) - 1}/{len(data)}"
    assert server.requests_for("/a.bin")[-1]["range"] == "bytes=100-"


def test_server_faults(server):
    data = server.files["/a.bin"]
    server.ignore_range = True
    status, _, body = _get(server.url("/a.bin"), {"Range": "bytes=100-"})
    assert (status, body) == (200, data)
    server.fail_once_status = 503
    with pytest.raises(urllib.error.HTTPError) as info:
        _get(server.url("/a.bin"))
    assert info.value.code == 503
    assert _get(server.url("/a.bin"))[0] == 200
    server.tamper = True
    assert _get(server.url("/a.bin"))[2] != data
    server.cut_after = 10
    with pytest.raises(Exception, match="IncompleteRead|Connection"):
        _get(server.url("/a.bin"))
