"""Losses serialise their constructor arguments (ArgumentConfig): no loss writes `get_config`,
configs written before (issue 30) still load, and every registered loss round trips in safe mode."""

import json

import keras
import numpy as np
import pytest

from keras_dml import losses
from keras_dml.losses.argument_config import ArgumentConfig
from keras_dml.losses.loss_lookup import LOSSES

# `keras.saving.serialize_keras_object(loss)` of each registered loss, written by the code
# before ArgumentConfig (each class's hand-written get_config), with these arguments.
LEGACY_CONFIGS = json.loads(
    """
{
 "arcface": {
  "build_config": {
   "shapes_dict": {}
  },
  "class_name": "ArcFaceLoss",
  "config": {
   "dtype": {
    "class_name": "DTypePolicy",
    "config": {
     "name": "float32"
    },
    "module": "keras",
    "registered_name": null
   },
   "easy_margin": false,
   "embedding_dim": 8,
   "margin": 0.5,
   "name": "arcface_loss",
   "num_classes": 3,
   "scale": 64.0,
   "trainable": true,
   "weights_initializer": {
    "class_name": "RandomNormal",
    "config": {
     "mean": 0.0,
     "seed": null,
     "stddev": 0.05
    },
    "module": "keras.initializers",
    "registered_name": null
   }
  },
  "module": "keras_dml.losses.additive_margin",
  "registered_name": "keras_dml>ArcFaceLoss"
 },
 "binomial_deviance": {
  "class_name": "BinomialDevianceLoss",
  "config": {
   "alpha": 2.0,
   "balance": "separate",
   "beta": 0.5,
   "cost": 25.0,
   "name": "binomial_deviance_loss",
   "reduction": "sum_over_batch_size",
   "weight_normalization": "count"
  },
  "module": "keras_dml.losses.binomial_deviance",
  "registered_name": "keras_dml>BinomialDevianceLoss"
 },
 "circle": {
  "class_name": "CircleLoss",
  "config": {
   "gamma": 80.0,
   "margin": 0.4,
   "name": "circle_loss",
   "reduction": "sum_over_batch_size"
  },
  "module": "keras_dml.losses.circle",
  "registered_name": "keras_dml>CircleLoss"
 },
 "contrastive": {
  "class_name": "ContrastiveLoss",
  "config": {
   "balance": "separate",
   "margin": 0.5,
   "name": "contrastive_loss",
   "reduction": "sum_over_batch_size",
   "similarity": "cosine"
  },
  "module": "keras_dml.losses.contrastive",
  "registered_name": "keras_dml>ContrastiveLoss"
 },
 "cosface": {
  "build_config": {
   "shapes_dict": {}
  },
  "class_name": "CosFaceLoss",
  "config": {
   "dtype": {
    "class_name": "DTypePolicy",
    "config": {
     "name": "float32"
    },
    "module": "keras",
    "registered_name": null
   },
   "embedding_dim": 8,
   "margin": 0.35,
   "name": "cosface_loss",
   "num_classes": 3,
   "scale": 64.0,
   "trainable": true,
   "weights_initializer": {
    "class_name": "RandomNormal",
    "config": {
     "mean": 0.0,
     "seed": null,
     "stddev": 0.05
    },
    "module": "keras.initializers",
    "registered_name": null
   }
  },
  "module": "keras_dml.losses.additive_margin",
  "registered_name": "keras_dml>CosFaceLoss"
 },
 "cross_batch_memory": {
  "class_name": "CrossBatchMemory",
  "config": {
   "dtype": {
    "class_name": "DTypePolicy",
    "config": {
     "name": "float32"
    },
    "module": "keras",
    "registered_name": null
   },
   "embedding_dim": 8,
   "loss": {
    "class_name": "TripletLoss",
    "config": {
     "margin": 0.3,
     "mining": "batch-hard",
     "name": "triplet_loss",
     "reduction": "sum_over_batch_size",
     "seed": null,
     "soft_margin": false,
     "squared": false
    },
    "module": "keras_dml.losses.triplet",
    "registered_name": "keras_dml>TripletLoss"
   },
   "memory_size": 16,
   "miner": null,
   "name": "cross_batch_memory",
   "num_memories": 2,
   "trainable": true,
   "warmup_steps": 1
  },
  "module": "keras_dml.losses.cross_batch_memory",
  "registered_name": "keras_dml>CrossBatchMemory"
 },
 "fast_ap": {
  "class_name": "FastAPLoss",
  "config": {
   "name": "fast_ap_loss",
   "num_bins": 10,
   "reduction": "sum_over_batch_size"
  },
  "module": "keras_dml.losses.fast_ap",
  "registered_name": "keras_dml>FastAPLoss"
 },
 "learnable_margin": {
  "build_config": {
   "shapes_dict": {}
  },
  "class_name": "LearnableMarginLoss",
  "config": {
   "cutoff": 0.5,
   "dtype": {
    "class_name": "DTypePolicy",
    "config": {
     "name": "float32"
    },
    "module": "keras",
    "registered_name": null
   },
   "initial_beta": 1.1,
   "margin": 0.2,
   "name": "learnable_margin_loss",
   "nonzero_loss_cutoff": 1.4,
   "normalize_by": "nonzero",
   "normalize_embeddings": true,
   "nu": 0.0,
   "num_classes": 3,
   "sampling": "closest",
   "seed": 4,
   "trainable": true
  },
  "module": "keras_dml.losses.margin_layer",
  "registered_name": "keras_dml>LearnableMarginLoss"
 },
 "lifted_structure": {
  "class_name": "LiftedStructureLoss",
  "config": {
   "margin": 1.0,
   "name": "lifted_structure_loss",
   "normalize_embeddings": false,
   "reduction": "sum_over_batch_size"
  },
  "module": "keras_dml.losses.lifted_structure",
  "registered_name": "keras_dml>LiftedStructureLoss"
 },
 "margin": {
  "class_name": "MarginLoss",
  "config": {
   "beta": 1.1,
   "cutoff": 0.5,
   "margin": 0.2,
   "name": "margin_loss",
   "nonzero_loss_cutoff": 1.4,
   "normalize_by": "pairs",
   "normalize_embeddings": true,
   "reduction": "sum_over_batch_size",
   "sampling": "closest",
   "seed": 2
  },
  "module": "keras_dml.losses.margin",
  "registered_name": "keras_dml>MarginLoss"
 },
 "multi_similarity": {
  "class_name": "MultiSimilarityLoss",
  "config": {
   "alpha": 3.0,
   "base": 1.0,
   "beta": 50.0,
   "epsilon": 0.2,
   "name": "multi_similarity_loss",
   "reduction": "sum_over_batch_size"
  },
  "module": "keras_dml.losses.multi_similarity",
  "registered_name": "keras_dml>MultiSimilarityLoss"
 },
 "normalized_softmax": {
  "build_config": {
   "shapes_dict": {}
  },
  "class_name": "NormalizedSoftmaxLoss",
  "config": {
   "dtype": {
    "class_name": "DTypePolicy",
    "config": {
     "name": "float32"
    },
    "module": "keras",
    "registered_name": null
   },
   "embedding_dim": 8,
   "name": "normalized_softmax_loss",
   "num_classes": 3,
   "temperature": 0.05,
   "trainable": true,
   "weights_initializer": {
    "class_name": "RandomNormal",
    "config": {
     "mean": 0.0,
     "seed": null,
     "stddev": 0.05
    },
    "module": "keras.initializers",
    "registered_name": null
   }
  },
  "module": "keras_dml.losses.normalized_softmax",
  "registered_name": "keras_dml>NormalizedSoftmaxLoss"
 },
 "npairs": {
  "class_name": "NPairsLoss",
  "config": {
   "name": "npairs_loss",
   "normalize_embeddings": false,
   "reduction": "sum_over_batch_size"
  },
  "module": "keras_dml.losses.npairs",
  "registered_name": "keras_dml>NPairsLoss"
 },
 "ntxent": {
  "class_name": "NTXentLoss",
  "config": {
   "name": "ntxent_loss",
   "reduction": "sum_over_batch_size",
   "temperature": 0.07
  },
  "module": "keras_dml.losses.ntxent",
  "registered_name": "keras_dml>NTXentLoss"
 },
 "proxy_anchor": {
  "build_config": {
   "shapes_dict": {}
  },
  "class_name": "ProxyAnchorLoss",
  "config": {
   "alpha": 32.0,
   "delta": 0.1,
   "dtype": {
    "class_name": "DTypePolicy",
    "config": {
     "name": "float32"
    },
    "module": "keras",
    "registered_name": null
   },
   "embedding_dim": 8,
   "name": "proxy_anchor_loss",
   "num_classes": 3,
   "trainable": true,
   "weights_initializer": {
    "class_name": "RandomNormal",
    "config": {
     "mean": 0.0,
     "seed": null,
     "stddev": 0.05
    },
    "module": "keras.initializers",
    "registered_name": null
   }
  },
  "module": "keras_dml.losses.proxy_anchor",
  "registered_name": "keras_dml>ProxyAnchorLoss"
 },
 "proxy_nca": {
  "build_config": {
   "shapes_dict": {}
  },
  "class_name": "ProxyNCALoss",
  "config": {
   "dtype": {
    "class_name": "DTypePolicy",
    "config": {
     "name": "float32"
    },
    "module": "keras",
    "registered_name": null
   },
   "embedding_dim": 8,
   "exclude_positive": true,
   "name": "proxy_nca_loss",
   "num_classes": 3,
   "proxy_initializer": {
    "class_name": "RandomNormal",
    "config": {
     "mean": 0.0,
     "seed": null,
     "stddev": 0.05
    },
    "module": "keras.initializers",
    "registered_name": null
   },
   "scale": 3.0,
   "trainable": true
  },
  "module": "keras_dml.losses.proxy_nca",
  "registered_name": "keras_dml>ProxyNCALoss"
 },
 "snr_contrastive": {
  "class_name": "SNRContrastiveLoss",
  "config": {
   "margin": 1.0,
   "name": "snr_contrastive_loss",
   "normalize_by": "nonzero",
   "normalize_embeddings": false,
   "reduction": "sum_over_batch_size",
   "regularization": 0.0
  },
  "module": "keras_dml.losses.snr_contrastive",
  "registered_name": "keras_dml>SNRContrastiveLoss"
 },
 "soft_triple": {
  "build_config": {
   "shapes_dict": {}
  },
  "class_name": "SoftTripleLoss",
  "config": {
   "centers_per_class": 10,
   "dtype": {
    "class_name": "DTypePolicy",
    "config": {
     "name": "float32"
    },
    "module": "keras",
    "registered_name": null
   },
   "embedding_dim": 8,
   "gamma": 0.1,
   "la": 20.0,
   "margin": 0.01,
   "name": "soft_triple_loss",
   "num_classes": 3,
   "tau": 0.2,
   "trainable": true,
   "weights_initializer": {
    "class_name": "RandomNormal",
    "config": {
     "mean": 0.0,
     "seed": null,
     "stddev": 0.05
    },
    "module": "keras.initializers",
    "registered_name": null
   }
  },
  "module": "keras_dml.losses.soft_triple",
  "registered_name": "keras_dml>SoftTripleLoss"
 },
 "subcenter_arcface": {
  "build_config": {
   "shapes_dict": {}
  },
  "class_name": "SubCenterArcFaceLoss",
  "config": {
   "dtype": {
    "class_name": "DTypePolicy",
    "config": {
     "name": "float32"
    },
    "module": "keras",
    "registered_name": null
   },
   "easy_margin": false,
   "embedding_dim": 8,
   "margin": 0.5,
   "name": "subcenter_arcface_loss",
   "num_classes": 3,
   "num_sub_centers": 3,
   "scale": 64.0,
   "trainable": true,
   "weights_initializer": {
    "class_name": "RandomNormal",
    "config": {
     "mean": 0.0,
     "seed": null,
     "stddev": 0.05
    },
    "module": "keras.initializers",
    "registered_name": null
   }
  },
  "module": "keras_dml.losses.subcenter_arcface",
  "registered_name": "keras_dml>SubCenterArcFaceLoss"
 },
 "supcon": {
  "class_name": "SupConLoss",
  "config": {
   "name": "supcon_loss",
   "reduction": "sum_over_batch_size",
   "temperature": 0.1
  },
  "module": "keras_dml.losses.supcon",
  "registered_name": "keras_dml>SupConLoss"
 },
 "triplet": {
  "class_name": "TripletLoss",
  "config": {
   "margin": 0.3,
   "mining": "random",
   "name": "triplet_loss",
   "reduction": "sum_over_batch_size",
   "seed": 7,
   "soft_margin": false,
   "squared": false
  },
  "module": "keras_dml.losses.triplet",
  "registered_name": "keras_dml>TripletLoss"
 },
 "tuplet_margin": {
  "class_name": "TupletMarginLoss",
  "config": {
   "margin": 0.1,
   "name": "tuplet_margin_loss",
   "reduction": "sum_over_batch_size",
   "scale": 64.0
  },
  "module": "keras_dml.losses.tuplet_margin",
  "registered_name": "keras_dml>TupletMarginLoss"
 }
}
"""
)

CLASS_SIZES = {"num_classes": 3, "embedding_dim": 8}
CLASS_LOSSES = {name for name in LEGACY_CONFIGS if losses.is_class_loss(name)}
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


def test_every_registered_loss_has_a_legacy_config():
    assert sorted(LEGACY_CONFIGS) == losses.list_losses()


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_no_loss_writes_get_config_by_hand(name):
    cls = LOSSES[name]
    assert issubclass(cls, ArgumentConfig)
    for base in cls.__mro__[: cls.__mro__.index(ArgumentConfig)]:
        assert "get_config" not in vars(base), f"{base.__name__} writes get_config"


@pytest.mark.parametrize("name", sorted(LEGACY_CONFIGS))
def test_a_legacy_config_loads_and_keeps_every_argument(name):
    legacy = LEGACY_CONFIGS[name]
    loss = keras.saving.deserialize_keras_object(legacy, safe_mode=True)
    assert type(loss).__name__ == legacy["class_name"]
    _contains(keras.saving.serialize_keras_object(loss)["config"], legacy["config"])


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
