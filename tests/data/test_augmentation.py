"""Augmentation the user chooses: each mode's effect, per-dataset defaults, Keras pipelines."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_dml.data import load_dataset
from keras_dml.data.image_dataset import ImageDataset
from keras_dml.data.preprocessing import (
    AUGMENTATIONS,
    check_augmentation,
    preprocess_for_eval,
    preprocess_for_train,
)

SEEDS = [tf.constant([s, 11]) for s in range(12)]


def _image(height=32, width=32):
    return np.random.default_rng(0).integers(0, 256, (height, width, 3)).astype(np.uint8)


def _train(image, augmentation, seed, size=32, resize_size=None):
    return preprocess_for_train(
        tf.constant(image), size, seed, resize_size=resize_size, augmentation=augmentation
    ).numpy()


def _windows(image, size):
    """Every `size` x `size` window of `image` as float32, keyed by its (top, left)."""
    height, width = image.shape[:2]
    return {
        (t, left): image[t : t + size, left : left + size].astype(np.float32)
        for t in range(height - size + 1)
        for left in range(width - size + 1)
    }


def test_eval_keeps_an_image_already_at_the_target_size():
    image = _image()
    np.testing.assert_array_equal(preprocess_for_eval(tf.constant(image), 32).numpy(), image)
    data = ImageDataset([0, 1], images=np.stack([image, image[::-1]]), image_size=32)
    batch = next(iter(data.as_tf_dataset(training=False, batch_size=2)))[0].numpy()
    np.testing.assert_array_equal(batch, np.stack([image, image[::-1]]).astype(np.float32))
    # Larger images are still resized and center cropped.
    assert tuple(preprocess_for_eval(tf.constant(_image(30, 40)), 24).shape) == (24, 24, 3)


def test_none_gives_identical_pixels_every_time():
    image = _image()
    for seed in SEEDS[:4]:
        np.testing.assert_array_equal(_train(image, "none", seed), image)


def test_flip_mirrors_for_some_seeds_and_never_shifts():
    image = _image()
    outs = [_train(image, "flip", seed) for seed in SEEDS]
    mirrored = [np.array_equal(o, image[:, ::-1]) for o in outs]
    assert all(m or np.array_equal(o, image) for o, m in zip(outs, mirrored))
    assert any(mirrored) and not all(mirrored)


def test_crop_shifts_the_window_and_never_mirrors():
    image = _image(40, 40)
    windows = _windows(image, 32)
    offsets = set()
    for seed in SEEDS:
        out = _train(image, "crop", seed, resize_size=40)
        found = [k for k, w in windows.items() if np.array_equal(out, w)]
        assert len(found) == 1  # A window of the (unresized) image, not its mirror.
        offsets.add(found[0])
    assert len(offsets) > 2


def test_crop_flip_mirrors_some_windows():
    image = _image(40, 40)
    windows = _windows(image, 32)
    outs = [_train(image, "crop_flip", seed, resize_size=40) for seed in SEEDS]
    plain = [any(np.array_equal(o, w) for w in windows.values()) for o in outs]
    mirrored = [any(np.array_equal(o[:, ::-1], w) for w in windows.values()) for o in outs]
    assert all(p or m for p, m in zip(plain, mirrored))
    assert any(mirrored) and any(plain)


@pytest.mark.parametrize("augmentation", ["resized_crop", "resized_crop_flip"])
def test_resized_crop_changes_scale_and_is_seeded(augmentation):
    image = _image(40, 40)
    outs = [_train(image, augmentation, seed) for seed in SEEDS[:6]]
    np.testing.assert_array_equal(outs[0], _train(image, augmentation, SEEDS[0]))
    assert all(o.shape == (32, 32, 3) for o in outs)
    center = preprocess_for_eval(tf.constant(image), 32).numpy()
    assert sum(not np.allclose(o, center) for o in outs) >= 5


def test_defaults_per_dataset_and_pipeline_uses_them():
    assert load_dataset("digits", "test").augmentation == "none"
    files = ImageDataset([0], paths=["a.jpg"])
    assert files.augmentation == "crop_flip" and files.subset([0]).augmentation == "crop_flip"
    # Training on in-memory images at their stored size returns the stored pixels.
    images = np.stack([_image(), _image()[::-1]])
    data = ImageDataset([0, 1], images=images, image_size=32)
    batch, labels = next(iter(data.as_tf_dataset(training=True, batch_size=2, shuffle=False)))
    np.testing.assert_array_equal(batch.numpy(), images.astype(np.float32))
    flipped = ImageDataset([0, 1], images=images, image_size=32, augmentation="flip")
    seen = [
        b.numpy()
        for b, _ in flipped.as_tf_dataset(True, batch_size=2, shuffle=False, seed=1).repeat(6)
    ]
    assert any(np.array_equal(b[0], images[0][:, ::-1]) for b in seen)


def test_keras_pipeline_is_applied_to_training_batches():
    images = np.stack([_image(), _image()[::-1]])
    data = ImageDataset([0, 1], images=images, image_size=32)
    halve = keras.Sequential([keras.layers.Rescaling(0.5)])
    batch = next(iter(data.as_tf_dataset(True, batch_size=2, shuffle=False, augmentation=halve)))
    np.testing.assert_allclose(batch[0].numpy(), images * 0.5)
    # Evaluation ignores the training augmentation.
    plain = next(iter(data.as_tf_dataset(False, batch_size=2, augmentation=halve)))
    np.testing.assert_array_equal(plain[0].numpy(), images.astype(np.float32))

    class Sampler:
        batch_size, num_batches = 2, 1

        def epoch_batches(self):
            return [np.array([1, 0])]

    rotate = keras.Sequential([keras.layers.RandomRotation(0.2, seed=3)])
    out = next(iter(data.as_tf_dataset(True, sampler=Sampler(), seed=0, augmentation=rotate)))
    assert out[0].shape == (2, 32, 32, 3) and not np.allclose(out[0].numpy()[0], images[1])


def test_bad_augmentation_values_raise_with_the_choices():
    data = ImageDataset([0, 1], images=np.zeros((2, 32, 32, 3), np.uint8), image_size=32)
    with pytest.raises(ValueError, match=r"choose one of \('none', 'flip'"):
        data.as_tf_dataset(True, batch_size=2, augmentation="mixup")
    with pytest.raises(ValueError, match="augmentation="):
        ImageDataset([0], images=np.zeros((1, 8, 8, 3), np.uint8), augmentation="flips")
    with pytest.raises(ValueError, match=r"keep the batch shape \[B, 32, 32, 3\]"):
        data.as_tf_dataset(True, batch_size=2, augmentation=keras.layers.Resizing(16, 16))
    assert all(check_augmentation(name) == name for name in AUGMENTATIONS)
