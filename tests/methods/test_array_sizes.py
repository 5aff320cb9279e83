"""Every method trains through `train()` on arrays of another size than `image_size`.

Training, the division passes of D&C and hierarchical D&C, and evaluation all resize to
`image_size`: 28 x 28 grayscale and 40 x 40 RGB arrays train at the default 32.
"""

import numpy as np
import pytest

from keras_dml.data.datasets import from_arrays
from keras_dml.methods import list_methods
from keras_dml.training import train
from tests.support.ci_rotation import rotating

SHAPES = {"gray28": (28, 28), "rgb40": (40, 40, 3)}


def array_splits(shape):
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(12), 6)
    images = (rng.random((labels.size, *shape)) * 255).astype("uint8")
    return {
        split: from_arrays(images, labels, split=split, test_fraction=0.3, val_fraction=0.3)
        for split in ("train", "val", "test")
    }


def train_on(method, shape, output_dir, epochs=1, **method_options):
    config = {
        "method_options": method_options,
        "method": method,
        "dataset": "arrays",
        "epochs": epochs,
        "batch_size": 16,
        "m_per_class": 4,
        "backbone": "convnet",
    }
    return train(config, str(output_dir), verbose=0, splits=array_splits(shape), report=False)


# D&C divides before its first epoch, hierarchical D&C before its second (`division_every=1`).
DIVIDING = {"dc": (1, {}), "hdc": (2, {"division_every": 1})}


@pytest.mark.parametrize(("method", "shape"), [("dc", "gray28"), ("hdc", "rgb40")])
def test_division_passes_resize_like_training(method, shape, tmp_path):
    epochs, options = DIVIDING[method]
    result = train_on(method, SHAPES[shape], tmp_path, epochs=epochs, **options)
    assert np.isfinite(result["metrics"]["recall@1"])
    assert f"{method}_recluster_seconds" in result["history"]  # the division pass ran


def test_division_pass_reads_the_run_image_size():
    from keras_dml.methods.division.embedding_pass import cached_inputs

    data = array_splits(SHAPES["gray28"])["train"]
    inputs = cached_inputs(data, 8, image_size=32)
    # A batched pipeline (tf.data), or the cached `(images, labels)` arrays (other backends).
    images = inputs[0] if isinstance(inputs, tuple) else next(iter(inputs))[0]
    assert tuple(images.shape[1:]) == (32, 32, 3)


@pytest.mark.slow
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("method", rotating(list_methods()))
def test_every_method_trains_on_arrays_of_another_size(method, shape, tmp_path):
    result = train_on(method, SHAPES[shape], tmp_path, epochs=2)
    assert np.isfinite(result["metrics"]["recall@1"])
