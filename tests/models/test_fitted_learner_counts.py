"""Learner counts fitted to the data always build, with the default embedding size."""

import types

import keras
import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.methods import get_method, list_methods
from keras_dml.models.divide_and_conquer import DivideAndConquer
from keras_dml.models.learner_dims import resolve_learner_dims
from keras_dml.training.resolve import default_argument, fitted_learner_count
from tests.support.configs import config_dict
from tests.support.helpers import roundtrip, tiny_images

# Every method whose learner count `resolve_run` fits to the training classes (D&C, HDC).
FITTED = sorted(name for name in list_methods() if get_method(name).classes_per_learner)


@pytest.fixture(scope="module")
def backbone():
    keras.utils.set_random_seed(0)
    return backbones.get("convnet", input_shape=(32, 32, 3))


def fitted_model(name, num_classes, backbone):
    """The method's model as `train` builds it: default settings fitted to `num_classes`."""
    method = get_method(name)
    labels = np.repeat(np.arange(num_classes), 4)
    config = config_dict({"method": name, "dataset": "digits"})
    config["model"] = fitted_learner_count(config["model"], method, num_classes)
    splits = {"train": types.SimpleNamespace(labels=labels)}
    return config["model"][method.learners_option], method.build(config, backbone, splits)


def test_every_method_that_fits_a_learner_count_is_covered():
    assert {"dc", "hdc"} <= set(FITTED)


@pytest.mark.parametrize("num_classes", range(2, 13))
@pytest.mark.parametrize("name", FITTED)
def test_fitted_learner_count_builds_with_the_default_embedding(name, num_classes, backbone):
    """6 training classes fit 3 D&C learners, and 128 is not divisible by 3: it used to fail."""
    count, model = fitted_model(name, num_classes, backbone)
    per_learner = get_method(name).classes_per_learner
    default = default_argument(get_method(name).model, get_method(name).learners_option)
    assert default == 4 and count == min(default, max(1, num_classes // per_learner))
    assert getattr(model, get_method(name).learners_option) == count
    assert sum(model.learner_dims) == model.embedding_dim
    assert max(model.learner_dims) - min(model.learner_dims) <= 1
    assert tuple(model(tiny_images(2)).shape) == (2, model.embedding_dim)


def test_uneven_learners_survive_a_keras_round_trip(backbone):
    count, model = fitted_model("dc", 6, backbone)
    assert count == 3 and model.learner_dims == (43, 43, 42)
    images = tiny_images(2)
    reloaded = roundtrip(model)
    assert isinstance(reloaded, DivideAndConquer) and reloaded.learner_dims == (43, 43, 42)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(reloaded(images)),
        keras.ops.convert_to_numpy(model(images)),
        atol=1e-5,
    )
    learners = model.learner_embeddings(images)
    assert [int(e.shape[-1]) for e in learners] == [43, 43, 42]
    norms = [np.linalg.norm(keras.ops.convert_to_numpy(e), axis=1) for e in learners]
    np.testing.assert_allclose(np.stack(norms), 1.0, atol=1e-5)


@pytest.mark.parametrize(
    "dim, count, expected",
    [(128, 3, (43, 43, 42)), (128, 5, (26, 26, 26, 25, 25)), (128, 4, (32,) * 4), (7, 7, (1,) * 7)],
)
def test_embedding_is_split_as_evenly_as_it_goes(dim, count, expected):
    assert resolve_learner_dims(dim, count) == expected


def test_learner_sizes_errors_name_the_fix():
    with pytest.raises(ValueError, match="at least `num_learners`.*--embedding-dim"):
        resolve_learner_dims(2, 3)
    with pytest.raises(ValueError, match="divisible by `num_learners` .*share one head"):
        resolve_learner_dims(128, 3, equal=True)
