"""Miners are registered, serialisable objects: configs, Keras round trips, the name table."""

import json

import keras
import numpy as np
import pytest

from keras_dml import losses, miners
from tests.support.backend_utils import to_numpy

CONFIGURED = {
    "all_pairs": {},
    "all_triplets": {},
    "batch_hard": {},
    "closest": {"cutoff": 0.3},
    "distance_weighted": {"cutoff": 0.4, "nonzero_loss_cutoff": 1.3},
    "multi_similarity": {"epsilon": 0.25},
    "random": {},
    "semi_hard": {},
}


def test_every_registered_miner_is_configured_here():
    assert sorted(CONFIGURED) == miners.list_miners()


@pytest.mark.parametrize("name", sorted(CONFIGURED))
def test_a_miner_round_trips_through_keras_serialization_in_safe_mode(name):
    miner = miners.get(name, **CONFIGURED[name])
    assert miner.get_config() == CONFIGURED[name]  # every argument, nothing else
    text = json.dumps(keras.saving.serialize_keras_object(miner))
    again = keras.saving.deserialize_keras_object(json.loads(text), safe_mode=True)
    assert type(again) is type(miner) and again == miner


def test_the_name_table_takes_names_dicts_and_objects():
    miner = miners.MultiSimilarityMiner(0.2)
    assert miners.get("Multi-Similarity", epsilon=0.2) == miner
    assert miners.get({"name": "multi_similarity", "epsilon": 0.2}) == miner
    assert miners.get(keras.saving.serialize_keras_object(miner)) == miner
    assert miners.get(miner) is miner
    assert miners.get("semi_hard") != miners.get("batch_hard")
    with pytest.raises(ValueError, match="Did you mean 'batch_hard'") as error:
        miners.get("batch_hrad")
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="Cannot interpret a miner") as error:
        miners.get(3)
    assert "\n" not in str(error.value)


def test_a_loss_with_a_miner_round_trips_with_its_miner():
    loss = losses.TripletLoss(margin=0.3, miner=miners.ClosestNegativeMiner(0.2), seed=1)
    config = loss.get_config()
    assert config["miner"]["config"] == {"cutoff": 0.2} and config["mining"] is None
    text = json.dumps(keras.saving.serialize_keras_object(loss))
    again = keras.saving.deserialize_keras_object(json.loads(text), safe_mode=True)
    assert again.miner == miners.ClosestNegativeMiner(0.2) and again.margin == 0.3
    labels = np.array([0, 0, 1, 1, 2, 2])
    x = np.random.default_rng(0).normal(size=(6, 4)).astype("float32")
    assert float(again(labels, x)) == float(loss(labels, x))


def test_a_cross_batch_memory_round_trips_with_its_miner():
    xbm = losses.CrossBatchMemory(
        losses.ContrastiveLoss(margin=0.7), memory_size=8, embedding_dim=4, miner="all_pairs"
    )
    text = json.dumps(keras.saving.serialize_keras_object(xbm))
    again = keras.saving.deserialize_keras_object(json.loads(text), safe_mode=True)
    assert again.miner == miners.AllPairsMiner() and again.inner_loss.margin == 0.7
    labels = np.array([0, 0, 1, 1])
    x = np.random.default_rng(1).normal(size=(4, 4)).astype("float32")
    assert to_numpy(again(labels, x)) == to_numpy(xbm(labels, x))
