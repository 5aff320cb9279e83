"""The run configuration and the CLI carry the training augmentation to the input pipeline."""

import keras
import pytest

from keras_dml.data import load_dataset
from keras_dml.data.image_dataset import ImageDataset
from keras_dml.data.preprocessing import AUGMENTATIONS
from keras_dml.methods.defaults import build_augmentation, m_per_class_batches
from keras_dml.methods.division.batches import cluster_batches
from keras_dml.training.run_config import DEFAULTS
from keras_dml_cli import build_parser, main
from keras_dml_cli.run.train import config_from_args
from tests.support.configs import config_dict

BASE = {"method": "baseline", "dataset": "digits", "batch_size": 8, "m_per_class": 4}


@pytest.fixture
def captured(monkeypatch):
    """Records the `augmentation` that training code passes to `as_tf_dataset`."""
    seen = []
    original = ImageDataset.as_tf_dataset

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("augmentation", "<not passed>"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ImageDataset, "as_tf_dataset", spy)
    return seen


def test_config_default_and_validation():
    assert DEFAULTS["augmentation"] is None
    for name in AUGMENTATIONS:
        assert config_dict({**BASE, "augmentation": name})["augmentation"] == name
    with pytest.raises(ValueError, match=r"Unknown `augmentation`.*'resized_crop_flip'"):
        config_dict({**BASE, "augmentation": "mixup"})


def test_keras_pipeline_in_the_config_is_stored_serialized(captured):
    pipeline = keras.Sequential([keras.layers.RandomRotation(0.1, seed=2)])
    config = config_dict({**BASE, "augmentation": pipeline})
    assert isinstance(config["augmentation"], dict)
    rebuilt = build_augmentation(config)
    assert isinstance(rebuilt, keras.Sequential)
    assert tuple(rebuilt.layers[0].get_config()["factor"]) == (-0.1, 0.1)
    m_per_class_batches(config, None, {"train": load_dataset("digits", "train")})
    assert isinstance(captured[-1], keras.Sequential)


@pytest.mark.parametrize("augmentation", [None, "flip", "resized_crop"])
def test_both_training_batch_builders_pass_the_augmentation(augmentation, captured):
    config = config_dict({**BASE, "augmentation": augmentation})
    train = load_dataset("digits", "train")
    m_per_class_batches(config, None, {"train": train})
    cluster_batches(config, train)
    assert captured == [augmentation, augmentation]


def test_cli_flag_reaches_the_config_and_help_lists_every_value(capsys):
    parser = build_parser()
    args = parser.parse_args(
        ["train", "--method", "baseline", "--dataset", "digits", "--augmentation", "crop"]
        + ["--output", "unused"]
    )
    assert config_from_args(args)["augmentation"] == "crop"
    default = parser.parse_args(
        ["train", "--method", "baseline", "--dataset", "digits"] + ["--output", "x"]
    )
    assert config_from_args(default)["augmentation"] is None
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert all(name in help_text for name in AUGMENTATIONS)


def test_cli_bad_augmentation_is_a_one_line_error(tmp_path, capsys):
    argv = ["train", "--method", "baseline", "--dataset", "digits", "--augmentation", "mixup"]
    # An error of the run exits 1 (2 is an argparse usage error).
    assert main(argv + ["--output", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "augmentation='mixup'" in err and "crop_flip" in err
