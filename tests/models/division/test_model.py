"""`keras_dml.models.division`: the base D&C and hierarchical D&C compile on, the batch cluster."""

import keras
import numpy as np
import pytest

from keras_dml.losses import ContrastiveLoss, MarginLoss, ProxyAnchorLoss
from keras_dml.methods import get_method, list_methods
from keras_dml.models.division.model import DivisionModel, batch_cluster
from tests.models.divide_and_conquer.test_model import tiny_backbone

# The methods whose architecture divides the embedding, each built from its `MethodSpec.tiny`.
DIVISION_METHODS = [
    name for name in list_methods() if issubclass(get_method(name).model, DivisionModel)
]


def build(name):
    return get_method(name).tiny_model(tiny_backbone())


@pytest.mark.parametrize("name", DIVISION_METHODS)
def test_compile_defaults_to_the_papers_margin_loss_and_builds_the_optimizer(name):
    model = build(name)
    assert isinstance(model, DivisionModel)
    model.compile(optimizer="adam")
    assert isinstance(model.loss, MarginLoss)
    config = model.loss.get_config()
    assert (config["beta"], config["margin"], config["sampling"]) == (
        1.2,
        0.2,
        "distance_weighted",
    )
    # Built at compile, before any step, on every trainable variable.
    assert model.optimizer.built
    model.compile(optimizer="adam", loss=ContrastiveLoss())
    assert isinstance(model.loss, ContrastiveLoss)


@pytest.mark.parametrize("name", DIVISION_METHODS)
def test_compile_keeps_an_owned_loss_layer(name):
    model = build(name)
    model.compile(optimizer="adam", loss=ProxyAnchorLoss(num_classes=3, embedding_dim=16))
    model.compile(optimizer="adam")  # loss=None keeps the owned layer, adds no margin loss
    assert isinstance(model.loss_layer, ProxyAnchorLoss)
    assert model.loss is None


def test_batch_cluster_is_the_first_examples_cluster_as_int32():
    value = batch_cluster(np.array([[3], [3], [3]], dtype="int64"))
    assert keras.ops.convert_to_numpy(value).dtype == np.int32
    assert int(value) == 3
    assert int(batch_cluster(np.array([1, 0, 0]))) == 1
