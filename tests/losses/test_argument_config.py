"""Losses serialise their constructor arguments (ArgumentConfig): no loss writes `get_config`,
every registered loss round trips in safe mode."""

import json

import keras
import numpy as np
import pytest

from keras_dml import losses
from keras_dml.losses.registry import LOSSES
from keras_dml.utils.argument_config import ArgumentConfig

CLASS_SIZES = {"num_classes": 3, "embedding_dim": 8}
CLASS_LOSSES = {name for name in LOSSES if losses.is_class_loss(name)}
# Non-default arguments per loss for the round trips (class losses also get CLASS_SIZES).
ARGUMENTS = {
    "contrastive": {"similarity": "cosine", "balance": "separate", "miner": "multi_similarity"},
    "cross_batch_memory": {
        "loss": losses.TripletLoss(margin=0.3, mining="batch-hard"),
        "memory_size": 16,
        "embedding_dim": 8,
        "num_memories": 2,
    },
    "learnable_margin": {"num_classes": 3, "sampling": "closest", "seed": 4},
    "margin": {"beta": 1.1, "miner": {"name": "closest", "cutoff": 0.4}, "seed": 2},
    "multi_similarity": {"alpha": 3.0, "epsilon": 0.2},
    "triplet": {"margin": 0.3, "mining": "random", "seed": 7},
    "arcface": {"weights_initializer": keras.initializers.Constant(0.5)},
}
LABELS = np.array([0, 1, 2, 0, 1, 2, 0, 1], "int32")


def _build(name):
    arguments = dict(ARGUMENTS.get(name, {}))
    if name in CLASS_LOSSES:
        arguments.update(CLASS_SIZES)
    return losses.get(name, **arguments)


def _value(loss, embeddings):
    return float(keras.ops.convert_to_numpy(loss(LABELS, embeddings)))


def _contains(container, part, path=""):
    """Every key of `part` is in `container` with the same value (nested dicts recursively)."""
    for key, value in part.items():
        assert key in container, f"{path}{key} missing"
        if isinstance(value, dict) and isinstance(container[key], dict):
            _contains(container[key], value, f"{path}{key}.")
        else:
            assert container[key] == value, f"{path}{key}: {container[key]!r} != {value!r}"


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_no_loss_writes_get_config_by_hand(name):
    cls = LOSSES[name]
    assert issubclass(cls, ArgumentConfig)
    for base in cls.__mro__[: cls.__mro__.index(ArgumentConfig)]:
        assert "get_config" not in vars(base), f"{base.__name__} writes get_config"


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_every_loss_round_trips_through_json_in_safe_mode(name):
    loss = _build(name)
    text = json.dumps(keras.saving.serialize_keras_object(loss))
    again = keras.saving.deserialize_keras_object(json.loads(text), safe_mode=True)
    assert type(again) is type(loss)
    assert again.get_config() == loss.get_config()
    if isinstance(loss, keras.layers.Layer):
        again.set_weights(loss.get_weights())
    embeddings = np.random.default_rng(0).normal(size=(8, 8)).astype("float32")
    assert _value(again, embeddings) == _value(loss, embeddings)


def test_the_config_holds_the_arguments_as_passed_and_objects_serialised():
    config = _build("cross_batch_memory").get_config()
    assert config["loss"]["class_name"] == "TripletLoss"
    assert config["loss"]["config"]["mining"] == "batch-hard"
    assert config["memory_size"] == 16 and config["warmup_steps"] == 0  # defaults too
    config = _build("arcface").get_config()
    assert config["weights_initializer"]["class_name"] == "Constant"
    assert "kwargs" not in config


def test_the_config_holds_resolved_and_inherited_defaults():
    # margin=None becomes the similarity's margin, as the hand-written config stored it.
    assert losses.ContrastiveLoss().get_config()["margin"] == 1.0
    assert losses.ContrastiveLoss(similarity="cosine").get_config()["margin"] == 0.5
    # A class loss passes **kwargs to ClassWeightLoss: its initializer default is in the config.
    config = losses.ArcFaceLoss(**CLASS_SIZES).get_config()
    assert config["weights_initializer"] == "random_normal"


def test_a_plain_class_gets_the_config_of_its_arguments():
    class Scaled(ArgumentConfig):
        def __init__(self, scale=1.0, **options):
            self.scale, self.options = scale, options

    scaled = Scaled(2.0, shift=0.5)
    assert scaled.get_config() == {"scale": 2.0, "shift": 0.5}
    again = Scaled.from_config(scaled.get_config())
    assert (again.scale, again.options) == (2.0, {"shift": 0.5})
