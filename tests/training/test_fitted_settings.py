"""Settings the user left out fit the data; the user's own settings are kept or explained."""

import numpy as np
import pytest

from keras_dml.methods import get_method
from keras_dml.methods.batch_composition import fit_batch_composition, usable_classes
from keras_dml.training.resolve import fitted_learner_count
from keras_dml.training.run_config import parse_overrides
from tests.support.paths import REPO_ROOT


@pytest.mark.parametrize(
    "batch_size, m, classes, expected",
    [
        (None, None, 4, (64, 16)),  # digits / Fashion-MNIST: 4 training classes
        (None, None, 100, (64, 4)),  # CUB-sized: the classic 16 x 4
        (None, None, 5, (60, 12)),
        (None, 8, 4, (32, 8)),
        (None, 8, 100, (64, 8)),
        (64, None, 4, (64, 16)),
        (30, None, 100, (30, 5)),
        (32, 8, 4, (32, 8)),  # the user's own, valid: kept
    ],
)
def test_batch_composition_fits_the_classes(batch_size, m, classes, expected):
    assert fit_batch_composition(batch_size, m, classes) == expected
    fitted_batch, fitted_m = expected
    assert fitted_batch % fitted_m == 0 and 2 <= fitted_batch // fitted_m <= classes


def test_batch_composition_errors_name_the_flags():
    with pytest.raises(ValueError, match="--batch-size.*--m-per-class.*--batch-size 16"):
        fit_batch_composition(64, 4, 4)
    with pytest.raises(ValueError, match="at least 2 training classes"):
        fit_batch_composition(None, None, 1)
    with pytest.raises(ValueError, match="--batch-size 7"):
        fit_batch_composition(7, None, 10)


def test_learner_count_is_capped_only_when_unset():
    labels = np.repeat(np.arange(5), 3)
    assert usable_classes(np.append(labels, 9)) == 5  # class 9 has one image
    assert fitted_learner_count({}, get_method("dc"), 5) == {"num_learners": 2}
    assert fitted_learner_count({}, get_method("hdc"), 20) == {"max_learners": 4}
    assert fitted_learner_count({}, get_method("bier"), 5) == {}
    with pytest.raises(ValueError, match="--num-learners 2"):
        fitted_learner_count({"num_learners": 3}, get_method("dc"), 5)


def test_set_overrides_are_nested_and_json_parsed():
    assert parse_overrides(
        ["epochs=3", "data_dir=/x", "model.num_learners=2", "loss.margin=0.1"]
    ) == {
        "epochs": 3,
        "data_dir": "/x",
        "model": {"num_learners": 2},
        "loss": {"margin": 0.1},
    }
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_overrides(["epochs"])


def test_dev_extra_holds_every_extra_but_gpu_and_backends():
    # `backends` (= `jax` + `torch`) is installed by .ci/run for its own backend runs only (the
    # development environment's Keras backend is `tensorflow`); `beam` pins protobuf, pillow and
    # pyarrow below what TensorFlow's environment holds, so .ci/run gives it a venv of its own;
    # `hub`'s keras-hub requires the full `tensorflow` wheel and tensorflow-text, which .ci/run
    # leaves out by installing keras-hub with --no-deps; `pml` (the benchmark's PyTorch rows)
    # brings `torch`, which .ci/run installs as its CPU wheel first.
    import os
    import re

    root = REPO_ROOT
    with open(os.path.join(root, "pyproject.toml")) as f:
        text = f.read()
    section = text.split("[project.optional-dependencies]")[1].split("\n[")[0]
    extras = set(re.findall(r"^([\w-]+) = \[", section, re.M))
    extras -= {"dev", "gpu", "backends", "jax", "torch", "beam", "hub", "pml"}
    dev_entry = re.search(r"^dev = \[(.*?)^\]", section, re.M | re.S).group(1)
    dev = set(re.search(r'"keras-dml\[([\w,-]+)\]"', dev_entry).group(1).split(","))
    assert dev == extras
