"""Tiny trained models and a digits sample shared by the visualization tests."""

import keras
import numpy as np

from keras_dml import backbones, losses
from keras_dml.data import load_dataset
from keras_dml.models import EmbeddingModel
from keras_dml.visualization.report_run import sample_images


def digits_sample(split="test", count=60, seed=0):
    """`(images [n, 32, 32, 3] raw pixels, labels, class_names)` from the offline digits data."""
    data = load_dataset("digits", split=split, image_size=32)
    images, labels, _ = sample_images(data, count, 32, seed)
    return images, labels, list(data.class_names)


def trained(model, images, labels, steps=2):
    """`model` after `steps` Adam steps of the margin loss on `images` (a real trained state)."""
    if not model.compiled:
        # ABE and DCML carry their own losses; the plain model takes the margin loss.
        loss = losses.MarginLoss() if type(model) is EmbeddingModel else None
        model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=loss)
    batch = max(8, len(images) // steps)
    model.fit(images, labels, batch_size=batch, epochs=1, verbose=0, shuffle=False)
    return model


def convnet(seed=0):
    keras.utils.set_random_seed(seed)
    return backbones.get("convnet", input_shape=(32, 32, 3))


def brute_force_neighbors(embeddings, query_ids, k):
    """Top-k cosine neighbours of each query among all points, the query itself excluded."""
    x = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    sims = x[query_ids] @ x.T
    sims[np.arange(len(query_ids)), query_ids] = -np.inf
    return np.argsort(-sims, axis=1, kind="stable")[:, :k]
