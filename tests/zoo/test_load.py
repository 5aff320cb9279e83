"""Loading verified models: by name, path and preset; safe_mode; refused formats; presets."""

import json
import zipfile

import keras
import numpy as np
import pytest

from keras_dml import zoo
from tests.zoo.test_httpserver import ZooServer, file_entry, isolate_zoo, make_card, write_card

FAST = {"progress": False, "backoff_seconds": 0.01, "max_attempts": 2, "timeout": 5}
TRAINING = {"dataset": "cub200", "protocol": "first 100 classes train / last 100 test"}
METRICS = {"recall@1": 0.42, "command": "keras-dml evaluate --split test", "dataset": "cub200"}


def _tiny_model():
    keras.utils.set_random_seed(0)
    return keras.Sequential(
        [keras.Input((8, 8, 3)), keras.layers.Flatten(), keras.layers.Dense(4, name="embed")]
    )


@pytest.fixture
def images():
    return np.random.default_rng(0).uniform(0, 255, size=(2, 8, 8, 3)).astype("float32")


@pytest.fixture
def cards(monkeypatch, tmp_path):
    directory, _ = isolate_zoo(monkeypatch, tmp_path)
    return directory


def test_load_by_name_downloads_verifies_and_loads(cards, tmp_path, images):
    model = _tiny_model()
    model.save(tmp_path / "tiny.keras")
    data = (tmp_path / "tiny.keras").read_bytes()
    server = ZooServer({"/tiny.keras": data}).start()
    try:
        entry = file_entry("tiny.keras", data, url=server.url("/tiny.keras"))
        write_card(cards, make_card("zoo-test-load", [entry]))
        loaded = zoo.load("zoo-test-load", **FAST)
        server.tamper = True
        write_card(cards, make_card("zoo-test-tampered", [entry]))
        with pytest.raises(zoo.IntegrityError):
            zoo.load("zoo-test-tampered", **FAST)
    finally:
        server.stop()
    np.testing.assert_allclose(loaded.predict(images, verbose=0), model.predict(images, verbose=0))


def test_load_local_keras_file(tmp_path, images):
    model = _tiny_model()
    model.save(tmp_path / "tiny.keras")
    loaded = zoo.load(tmp_path / "tiny.keras")
    np.testing.assert_allclose(loaded(images), model(images), rtol=1e-6)
    with pytest.raises(FileNotFoundError, match="No such file"):
        zoo.load(str(tmp_path / "missing.keras"))


def test_lambda_model_is_refused(tmp_path):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Lambda(lambda x: x * 2.0)])
    model.save(tmp_path / "lambda.keras")
    with pytest.raises(zoo.UnsafeFormatError, match="safe_mode"):
        zoo.load(tmp_path / "lambda.keras")


@pytest.mark.parametrize(
    "filename, message",
    [
        ("model.pkl", "pickle"),
        ("model.pt", "PyTorch"),
        ("model.h5", "legacy Keras HDF5"),
        ("model.weights.h5", "weights only"),
        ("model.onnx", "unknown format"),
    ],
)
def test_code_executing_formats_are_refused(tmp_path, filename, message):
    (tmp_path / filename).write_bytes(b"\x80\x04payload")
    with pytest.raises(zoo.UnsafeFormatError, match=message):
        zoo.load(tmp_path / filename)


def test_savedmodel_and_fake_keras_are_refused(tmp_path):
    (tmp_path / "exported").mkdir()
    (tmp_path / "exported" / "saved_model.pb").write_bytes(b"graph")
    with pytest.raises(zoo.UnsafeFormatError, match="SavedModel"):
        zoo.load(tmp_path / "exported")
    (tmp_path / "fake.keras").write_bytes(b"not a zip")
    with pytest.raises(zoo.UnsafeFormatError, match="not a `.keras` zip"):
        zoo.load(tmp_path / "fake.keras")
    with zipfile.ZipFile(tmp_path / "empty.keras", "w") as archive:
        archive.writestr("payload.bin", b"x")
    with pytest.raises(zoo.UnsafeFormatError, match="without config.json"):
        zoo.load(tmp_path / "empty.keras")


def test_save_preset_round_trip_and_tamper(tmp_path, images):
    model = _tiny_model()
    card_path = zoo.save_preset(
        model, tmp_path / "preset", name="tiny", method="baseline", backbone="convnet",
        training=TRAINING, metrics=METRICS, base_url="https://example.org/zoo",
    )  # fmt: skip
    card = json.loads(card_path.read_text())
    assert [f["filename"] for f in card["files"]] == ["model.keras", "model.weights.h5"]
    for entry in card["files"]:
        assert entry["sha256"] == zoo.sha256_file(tmp_path / "preset" / entry["path"])
        assert entry["size"] == (tmp_path / "preset" / entry["path"]).stat().st_size
        assert entry["url"] == f"https://example.org/zoo/tiny/{entry['filename']}"
    assert card["metrics"]["values"] == {"recall@1": 0.42}
    assert card["metrics"]["split"] == "test"
    assert card["preprocessing"] == {"input_size": [8, 8], "pixel_range": [0, 255], "channels": 3}
    assert card["embedding_dim"] == 4
    loaded = zoo.load(tmp_path / "preset")
    np.testing.assert_allclose(loaded(images), model(images), rtol=1e-6)
    with pytest.raises(FileExistsError):
        zoo.save_preset(
            model, tmp_path / "preset", name="tiny", method="baseline", backbone="convnet",
            training=TRAINING, metrics=METRICS,
        )  # fmt: skip


def test_tampered_preset_file_is_not_loaded(tmp_path):
    model = _tiny_model()
    zoo.save_preset(
        model, tmp_path / "preset", name="tiny", method="baseline", backbone="convnet",
        training=TRAINING, metrics=METRICS,
    )  # fmt: skip
    path = tmp_path / "preset" / "model.keras"
    path.write_bytes(path.read_bytes() + b"\0")
    with pytest.warns(UserWarning), pytest.raises(zoo.IntegrityError, match="expected sha256"):
        zoo.load(tmp_path / "preset" / "card.json")
    assert path.exists()


def test_weights_only_preset(tmp_path, images):
    model = _tiny_model()
    zoo.save_preset(
        model, tmp_path / "w", name="tiny-w", method="baseline", backbone="convnet",
        training=TRAINING, metrics=METRICS, format="weights",
    )  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == ["card.json", "model.weights.h5"]
    card = zoo.read_card(tmp_path / "w" / "card.json")
    assert card.data["model"]["weights"] == "model.weights.h5"
    loaded = zoo.load(tmp_path / "w")
    np.testing.assert_allclose(loaded(images), model(images), rtol=1e-6)


def test_save_preset_validates_before_writing(tmp_path):
    with pytest.raises(zoo.CardValidationError, match="'metrics.command' is missing"):
        zoo.save_preset(
            _tiny_model(), tmp_path / "bad", name="tiny", method="baseline",
            backbone="convnet", training=TRAINING, metrics={"recall@1": 0.4},
        )  # fmt: skip
    assert not (tmp_path / "bad").exists()
