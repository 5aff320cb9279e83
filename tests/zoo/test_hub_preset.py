"""Hub preset folders: save, load with the card checked, a shipped entry converted, the CLI."""

import hashlib
import json

import keras
import numpy as np
import pytest

from keras_dml import zoo
from keras_dml_cli import main
from keras_dml_cli.run.export import load_model as export_load_model
from tests.zoo.conftest import CARD, TRAINING, tiny_model


def _copy(folder, tmp_path):
    import shutil

    return shutil.copytree(folder, tmp_path / "copy")


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_save_writes_the_keras_hub_layout_with_the_card(tiny_preset):
    folder, _ = tiny_preset
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md",
        "config.json",
        "metadata.json",
        "model.weights.h5",
    ]
    config = json.loads((folder / "config.json").read_text())
    assert config["class_name"] == "DivideAndConquer" and "compile_config" not in config
    metadata = json.loads((folder / "metadata.json").read_text())
    assert metadata["keras_version"] == keras.version()
    assert metadata["parameter_count"] == tiny_model().count_params()
    card = metadata["keras_dml"]
    assert card["model"] == {"config": "config.json", "weights": "model.weights.h5"}
    assert {e["filename"]: e["sha256"] for e in card["files"]} == {
        "config.json": _sha256(folder / "config.json"),
        "model.weights.h5": _sha256(folder / "model.weights.h5"),
    }
    assert card["metrics"]["values"] == {"recall@1": 0.5}
    assert card["training"] == TRAINING and card["embedding_dim"] == 16
    readme = (folder / "README.md").read_text()
    assert readme.startswith("---\nlibrary_name: keras\n") and "| recall@1 | 0.5 |" in readme


def test_folder_round_trip_gives_identical_predictions(tiny_preset, preset_images):
    folder, expected = tiny_preset
    model = zoo.load(folder)
    np.testing.assert_array_equal(model.predict(preset_images, verbose=0), expected)
    # Every command that takes a model goes through the same resolver.
    np.testing.assert_array_equal(
        zoo.resolve_model(str(folder)).predict(preset_images, verbose=0), expected
    )
    np.testing.assert_array_equal(
        export_load_model(str(folder)).predict(preset_images, verbose=0), expected
    )


@pytest.mark.parametrize("filename", ["model.weights.h5", "config.json"])
def test_a_changed_file_is_refused_in_one_line(tiny_preset, tmp_path, filename):
    folder = _copy(tiny_preset[0], tmp_path)
    data = bytearray((folder / filename).read_bytes())
    data[len(data) // 2] ^= 0xFF  # Same size, other bytes: only the sha256 tells.
    (folder / filename).write_bytes(bytes(data))
    with pytest.raises(zoo.IntegrityError, match=f"'{filename}'.*save it again") as caught:
        zoo.load(folder)
    assert "\n" not in str(caught.value)
    assert (folder / filename).exists()  # The user's own file is never deleted.


def test_a_lambda_config_is_refused_by_safe_mode(tmp_path):
    model = keras.Sequential([keras.Input((4, 4, 3)), keras.layers.Lambda(lambda x: x * 2.0)])
    folder = zoo.save_hub_preset(model, tmp_path / "lambda", **CARD)
    with pytest.raises(zoo.UnsafeFormatError, match="safe_mode"):
        zoo.load(folder)


def test_a_folder_without_a_keras_dml_card_is_refused(tmp_path):
    (tmp_path / "metadata.json").write_text(json.dumps({"keras_version": "3.0"}))
    with pytest.raises(zoo.ZooError, match="no 'keras_dml' card.*keras_hub:PRESET"):
        zoo.load(tmp_path)


def test_save_refuses_a_missing_field_before_writing(tmp_path):
    with pytest.raises(zoo.CardValidationError, match="'method' is missing"):
        zoo.save_hub_preset(tiny_model(), tmp_path / "p", **{**CARD, "method": None})
    assert not (tmp_path / "p").exists()


def test_save_from_a_run_folder(tmp_path, preset_images):
    run = tmp_path / "run"
    run.mkdir()
    model = tiny_model()
    model.save(run / "model.keras")
    (run / "metrics.json").write_text(json.dumps({"split": "test", "recall@1": 0.25}))
    (run / "config.json").write_text(json.dumps({"method": "dc", "dataset": "digits"}))
    with pytest.raises(zoo.CardValidationError, match="metrics.command"):
        zoo.save_hub_preset(run, tmp_path / "preset", backbone="convnet")
    folder = zoo.save_hub_preset(run, tmp_path / "preset", backbone="convnet", metrics_command="m")
    model_back, card = zoo.load_with_card(folder)
    assert card.data["metrics"]["values"] == {"recall@1": 0.25}
    assert card.name == "run" and card.data["training"]["dataset"] == "digits"
    np.testing.assert_array_equal(
        model_back.predict(preset_images, verbose=0), model.predict(preset_images, verbose=0)
    )
    with pytest.raises(FileExistsError, match="overwrite"):
        zoo.save_hub_preset(run, folder, backbone="convnet", metrics_command="m")


def test_a_shipped_entry_converts_and_keeps_its_checks(tmp_path, capsys):
    name = "digits_dc_convnet"
    shipped = zoo.get_card(name)
    assert main(["zoo", "convert", name, str(tmp_path / "preset")]) == 0
    model, card = zoo.load_with_card(tmp_path / "preset")
    for key in ("name", "method", "backbone", "training", "metrics", "license"):
        assert card.data[key] == shipped.data[key]
    assert shipped.files[0]["sha256"] in card.data["notes"]
    digits = np.random.default_rng(1).uniform(0, 255, size=(2, 32, 32, 3)).astype("float32")
    np.testing.assert_array_equal(
        model.predict(digits, verbose=0), zoo.load(name).predict(digits, verbose=0)
    )
    capsys.readouterr()
    assert main(["zoo", "load", str(tmp_path / "preset"), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["name"] == name and printed["output_shape"] == [None, 64]
    assert printed["input_shape"] == [None, 32, 32, 3]
    assert printed["files"]["model.weights.h5"] == _sha256(tmp_path / "preset/model.weights.h5")


def test_cli_load_prints_the_card_and_refuses_a_changed_file(tiny_preset, tmp_path, capsys):
    folder = _copy(tiny_preset[0], tmp_path)
    assert main(["zoo", "load", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "tiny-dc: dc on convnet, trained on digits" in out
    assert f"checked model.weights.h5  sha256={_sha256(folder / 'model.weights.h5')}" in out
    assert "input (None, 32, 32, 3) -> output (None, 16)" in out
    (folder / "model.weights.h5").write_bytes(b"x" + (folder / "model.weights.h5").read_bytes())
    assert main(["zoo", "load", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Integrity check failed for 'model.weights.h5'" in err


@pytest.mark.parametrize(
    "handle, message",
    [
        ("s3://bucket/model", "not a hub handle"),
        ("hf://just-a-name", "hf://OWNER/NAME"),
        ("kaggle://owner/model/keras", "kaggle://OWNER/MODEL/keras/VARIANT"),
        ("kaggle://owner/model/keras/variant/latest", "kaggle://OWNER/MODEL/keras/VARIANT"),
    ],
)
def test_bad_handles_fail_in_one_line(handle, message, capsys):
    assert main(["zoo", "load", handle]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_run_options_on_a_zoo_entry_are_refused(tmp_path, capsys):
    assert main(["zoo", "convert", "digits_dc_convnet", str(tmp_path), "--name", "x"]) == 1
    assert "--name only apply to a training run folder" in capsys.readouterr().err
