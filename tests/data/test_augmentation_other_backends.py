"""A Keras augmentation pipeline inside `as_tf_dataset` on JAX and PyTorch (`data.pipeline`).

tf.data traces its map functions into a graph of symbolic TensorFlow tensors, which a Keras layer
computes on only on the TensorFlow backend; on the others the pipeline runs eagerly per batch.
Keras reads `KERAS_BACKEND` at import, hence a process per backend.
"""

import importlib.util
import os
import subprocess
import sys

import pytest

CODE = """
import keras
import numpy as np
from keras_dml.data import ImageDataset

images = np.arange(2 * 32 * 32 * 3, dtype=np.uint8).reshape(2, 32, 32, 3) % 251
data = ImageDataset([0, 1], images=images, image_size=32)
halve = keras.Sequential([keras.layers.Rescaling(0.5)])
batch = next(iter(data.as_tf_dataset(True, batch_size=2, shuffle=False, augmentation=halve)))
np.testing.assert_allclose(batch[0].numpy(), images * 0.5)
print("AUGMENTED ON", keras.backend.backend())
"""


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_a_keras_augmentation_runs_in_tf_data_on_every_backend(backend):
    if importlib.util.find_spec(backend) is None:
        pytest.skip(f"{backend} is not installed: pip install -e '.[{backend}]'")
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(
        [sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=300
    )
    assert f"AUGMENTED ON {backend}" in result.stdout, result.stderr[-2000:]
