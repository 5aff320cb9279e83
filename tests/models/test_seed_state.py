"""A model's random generators are saved with its weights, so a resumed run draws the same.

Keras does not save `SeedGenerator` states with a model's weights: without keras-dml's own saving,
the margin loss's distance-weighted sampler (a generator the model tracks) starts over in a run
resumed from `BackupAndRestore` and draws other negatives than the uninterrupted run.
"""

import keras
import numpy as np
import pytest

from keras_dml import backbones, losses
from keras_dml.models import EmbeddingModel
from tests.support.helpers import tiny_images, tiny_labels

# Seed states carried through each backend's stateless step: the JAX line runs these.
pytestmark = pytest.mark.backend_semantics


def trained_model(steps, loss=None):
    keras.utils.set_random_seed(0)
    backbone = backbones.get("convnet", input_shape=(32, 32, 3))
    model = EmbeddingModel(backbone, embedding_dim=8, dropout=0.2)
    model.compile(optimizer="adam", loss=loss or losses.MarginLoss(seed=4))
    model.optimizer.build(model.trainable_variables)
    if steps:
        images, labels = tiny_images(8 * steps), tiny_labels(8 * steps)
        model.fit(images, labels, batch_size=8, epochs=1, shuffle=False, verbose=0)
    return model


def states(model):
    return [keras.ops.convert_to_numpy(v).tolist() for v in model.seed_states()]


def test_seed_states_are_saved_and_loaded_with_the_weights(tmp_path):
    model = trained_model(steps=2)
    assert len(model.seed_states()) == 2  # the dropout's and the margin loss's generators
    fresh = states(trained_model(steps=0))
    assert states(model) != fresh  # the training steps advanced them
    path = str(tmp_path / "backup.weights.h5")
    model.save_weights(path)

    resumed = trained_model(steps=0)
    resumed.load_weights(path)
    assert states(resumed) == states(model)


def test_files_without_seed_states_load_and_keep_the_models_own(tmp_path):
    model = trained_model(steps=2)
    expected = states(model)
    # A file of a model with other generators (its loss draws nothing), like a model loaded
    # with `compile=False`, or a file written before seed states were saved: the weights load,
    # the generators keep their states.
    other = trained_model(steps=1, loss=losses.ContrastiveLoss())
    assert len(other.seed_states()) == 1
    path = str(tmp_path / "other.weights.h5")
    other.save_weights(path)
    model.load_weights(path)
    assert states(model) == expected
    for got, saved in zip(model.weights, other.weights):
        np.testing.assert_array_equal(
            keras.ops.convert_to_numpy(got), keras.ops.convert_to_numpy(saved)
        )
