"""Hub presets through the hubs' clients: hf:// from a local Hub-like server, kaggle:// and push
with the network call replaced by a stand-in that checks the folder it is given."""

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

# The hubs' clients come with the `hub` extra (.ci/run installs them), not with `dev`.
huggingface_hub = pytest.importorskip("huggingface_hub")
kagglehub = pytest.importorskip("kagglehub")

from huggingface_hub import constants as hf_constants  # noqa: E402

from keras_dml import zoo  # noqa: E402
from keras_dml_cli import main  # noqa: E402
from tests.zoo.conftest import tiny_model  # noqa: E402

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class _HubHandler(BaseHTTPRequestHandler):
    """`HEAD`/`GET /{owner}/{name}/resolve/{revision}/{file}`, as huggingface_hub reads them."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def _answer(self, body):
        server = self.server
        server.requests.append((self.command, self.path))
        parts = self.path.split("/")
        data = None
        if len(parts) == 6 and parts[3] == "resolve" and "/".join(parts[1:3]) == server.repo:
            data = server.files.get(parts[5])
        if data is None:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if parts[5] in server.tampered:
            data = data[:-1] + bytes([data[-1] ^ 0xFF])
        self.send_response(200)
        self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def do_HEAD(self):
        self._answer(body=False)

    def do_GET(self):
        self._answer(body=True)


@pytest.fixture
def hub(monkeypatch, tmp_path, tiny_preset):
    """A Hub on 127.0.0.1 serving `tiny_preset` as `keras-dml/tiny-dc`, HF_ENDPOINT on it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HubHandler)
    server.repo = "keras-dml/tiny-dc"
    server.files = {p.name: p.read_bytes() for p in tiny_preset[0].iterdir()}
    server.tampered, server.requests = set(), []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    # huggingface_hub reads HF_ENDPOINT when it is imported: set what it derived from it.
    constants = hf_constants
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(
        constants,
        "HUGGINGFACE_CO_URL_TEMPLATE",
        endpoint + "/{repo_id}/resolve/{revision}/{filename}",
    )
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf_cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    yield server
    server.shutdown()
    server.server_close()


def test_hf_handle_loads_through_huggingface_hub(hub, tiny_preset, preset_images):
    model, card = zoo.load_with_card("hf://keras-dml/tiny-dc")
    np.testing.assert_array_equal(model.predict(preset_images, verbose=0), tiny_preset[1])
    assert card.name == "tiny-dc"
    fetched = {
        path.rsplit("/", 1)[-1]
        for method, path in hub.requests
        if method == "GET" and path.startswith("/keras-dml/tiny-dc/resolve/main/")
    }
    assert fetched == {"metadata.json", "config.json", "model.weights.h5"}


def test_commands_that_take_a_model_take_a_handle(hub, tiny_preset, preset_images):
    from keras_dml.pipelines.embed import launcher_embedder  # keras-dml embed's model

    vectors = launcher_embedder("hf://keras-dml/tiny-dc")(preset_images)
    np.testing.assert_allclose(vectors, tiny_preset[1], rtol=1e-5, atol=1e-6)
    resolved = zoo.resolve_model("hf://keras-dml/tiny-dc")  # keras-dml search, the indexes
    np.testing.assert_array_equal(resolved.predict(preset_images, verbose=0), tiny_preset[1])


def test_hf_handle_with_changed_weights_is_refused(hub):
    hub.tampered.add("model.weights.h5")
    with pytest.raises(zoo.IntegrityError, match="'model.weights.h5' from hf://keras-dml/tiny-dc"):
        zoo.load("hf://keras-dml/tiny-dc")


def test_hf_handle_of_a_missing_repository_fails_in_one_line(hub, capsys):
    assert main(["zoo", "load", "hf://keras-dml/missing"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Cannot fetch metadata.json of hf://keras-dml/missing" in err


def test_kaggle_handle_loads_through_kagglehub(monkeypatch, tiny_preset, preset_images):
    # Kaggle's API cannot be served offline: model_download is replaced at the network boundary.
    calls = []

    def model_download(handle, path=None, **kwargs):
        calls.append((handle, path))
        return str(tiny_preset[0] / path)

    monkeypatch.setattr(kagglehub, "model_download", model_download)
    model = zoo.load("kaggle://keras-dml/tiny-dc/keras/digits/2")
    np.testing.assert_array_equal(model.predict(preset_images, verbose=0), tiny_preset[1])
    assert {handle for handle, _ in calls} == {"keras-dml/tiny-dc/keras/digits/2"}
    assert sorted(path for _, path in calls) == ["config.json", "metadata.json", "model.weights.h5"]


def _checking_upload(uploads, preset_images, expected):
    """An upload stand-in: records the call and checks the folder is complete and loads back."""

    def check(handle, folder):
        names = sorted(p.name for p in folder.iterdir())
        assert names == ["README.md", "config.json", "metadata.json", "model.weights.h5"]
        model = zoo.load(folder)
        np.testing.assert_array_equal(model.predict(preset_images, verbose=0), expected)
        uploads.append((handle, folder, (folder / "README.md").read_text()))

    return check


@pytest.fixture
def run_dir(tmp_path):
    """A training run folder (model.keras, metrics.json, config.json) and its model."""
    import json

    run = tmp_path / "run"
    run.mkdir()
    model = tiny_model()
    model.save(run / "model.keras")
    (run / "metrics.json").write_text(json.dumps({"split": "test", "recall@1": 0.25}))
    config = {"method": "dc", "dataset": "digits", "backbone": {"name": "convnet"}}
    (run / "config.json").write_text(json.dumps(config))
    return run, model


def test_push_a_run_folder_to_hf(monkeypatch, run_dir, preset_images, capsys):
    run, model = run_dir
    uploads, repos = [], []
    check = _checking_upload(uploads, preset_images, model.predict(preset_images, verbose=0))

    class FakeApi:
        def create_repo(self, repo_id, **kwargs):
            repos.append((repo_id, kwargs))

        def upload_folder(self, repo_id, folder_path, **kwargs):
            from pathlib import Path

            check(repo_id, Path(folder_path))

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    argv = ["zoo", "push", str(run), "hf://keras-dml/tiny-run", "--metrics-command", "m"]
    assert main(argv) == 0
    assert repos == [("keras-dml/tiny-run", {"repo_type": "model", "exist_ok": True})]
    assert [u[0] for u in uploads] == ["keras-dml/tiny-run"]
    assert 'zoo.load("hf://keras-dml/tiny-run")' in uploads[0][2]
    assert not uploads[0][1].exists()  # The temporary preset is gone.
    assert "Pushed" in capsys.readouterr().out


def test_push_a_preset_folder_to_kaggle(monkeypatch, tiny_preset, preset_images):
    uploads = []
    check = _checking_upload(uploads, preset_images, tiny_preset[1])

    def model_upload(handle, local_model_dir, **kwargs):
        from pathlib import Path

        check(handle, Path(local_model_dir))

    monkeypatch.setattr(kagglehub, "model_upload", model_upload)
    zoo.push_hub_preset(tiny_preset[0], "kaggle://keras-dml/tiny-dc/keras/digits")
    assert [(u[0], u[1]) for u in uploads] == [("keras-dml/tiny-dc/keras/digits", tiny_preset[0])]


def test_push_refuses_a_bad_handle_or_a_changed_folder(monkeypatch, tiny_preset, tmp_path, capsys):
    import shutil

    monkeypatch.setattr(kagglehub, "model_upload", lambda *a, **k: pytest.fail("uploaded"))
    for handle in ("keras-dml/tiny-dc", "kaggle://keras-dml/tiny-dc/keras/digits/3"):
        assert main(["zoo", "push", str(tiny_preset[0]), handle]) == 1
        assert capsys.readouterr().err.count("\n") == 1
    folder = shutil.copytree(tiny_preset[0], tmp_path / "copy")
    (folder / "config.json").write_text((folder / "config.json").read_text() + " ")
    with pytest.raises(zoo.IntegrityError, match="'config.json'"):
        zoo.push_hub_preset(folder, "kaggle://keras-dml/tiny-dc/keras/digits")
