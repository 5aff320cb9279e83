"""The `tf.data` input pipeline behind `ImageDataset.as_tf_dataset`.

Sampler protocol (what `sampler=` accepts; `keras_dml.data.samplers` implements it):

- `batch_size`: int, images per batch;
- `num_batches`: int, batches per epoch;
- `epoch_batches()`: the next epoch's batches, a list of 1-D int64 index arrays into the dataset,
  or of `(indices, cluster_id)` tuples when `sampler.yields_clusters` is `True`.

`epoch_batches()` is called anew at the start of every epoch (the pipeline reads it through
`tf.data.Dataset.from_generator`), so a sampler whose cluster assignment is replaced between
epochs (Divide & Conquer re-clustering) takes effect without rebuilding the pipeline. Batch
`step` of epoch `epoch` is augmented with the stateless seed
`keras_dml.data.samplers.epoch_seeds.batch_seed(seed, epoch, step)`, where the epoch is the
sampler's `epoch` (the keras_dml samplers, set by `SamplerEpochCallback`) or, for a sampler
without one, the number of epochs the pipeline served before: with the keras_dml samplers a run
resumed at epoch e crops and flips exactly as the uninterrupted run did. A
sampler with a fixed epoch length (`MPerClassSampler`, `ClusterMPerClassSampler(...,
epoch_length=<int>)`) gives a dataset of known cardinality, so `model.fit` knows every epoch's
length. With `epoch_length="max"|"min"` the count follows the cluster assignment and the
cardinality is unknown: `model.fit` then runs its first epoch until the batches are used up (Keras
notes this with its "ran out of data" warning) and keeps that many steps per epoch, truncating
longer epochs and ending shorter ones early, so prefer an int when re-clustering. Batches may
differ in size (e.g. a small cluster's shorter batch).
"""

import numpy as np
import tensorflow as tf

from keras_dml.data.preprocessing import (
    decode_image,
    image_size_hw,
    preprocess_for_eval,
    preprocess_for_train,
)
from keras_dml.data.sampler_epochs import SamplerEpochs, has_fixed_length
from keras_dml.data.transform_options import checked_pipeline_arguments

AUTOTUNE = tf.data.AUTOTUNE


def make_tf_dataset(
    dataset,
    training=False,
    batch_size=32,
    sampler=None,
    image_size=None,
    resize_size=None,
    shuffle=None,
    seed=None,
    num_parallel_calls=None,
    with_clusters=False,
    augmentation=None,
    drop_remainder=None,
):
    """Builds a batched, prefetched `tf.data.Dataset` from an `ImageDataset`.

    Files are read and decoded in parallel (`tf.io.decode_image`, 3 channels, first GIF frame).
    Files are checked with `dataset.verify()` first, so missing or corrupt ones are reported and
    skipped before `labels` is used; anything that still fails to decode is dropped with a
    logged warning (`ignore_errors`) instead of ending the epoch.

    Args:
        dataset: `ImageDataset`.
        training: bool. Random augmentation when `True`, resize + center crop otherwise.
            Defaults to `False`.
        batch_size: int. Images per batch when no sampler is given. Defaults to `32`.
        sampler: batch sampler following the protocol of this module. Defaults to `None`.
        image_size: int or (height, width). Defaults to `None` (`dataset.image_size`).
        resize_size: int. Shorter side before cropping. Defaults to `None`.
        shuffle: bool. Shuffle (no sampler). Defaults to `None` (`training`).
        seed: int. Seed for shuffling and augmentation (with a sampler: of every batch's
            augmentation, from `(seed, epoch, step)`). Defaults to `None` (unseeded).
        num_parallel_calls: int. Defaults to `None` (`tf.data.AUTOTUNE`).
        with_clusters: bool. Yield `(images, {"labels": int32 [B], "clusters": int32 [B]})`;
            needs a sampler with `yields_clusters=True`. Defaults to `False`.
        augmentation: str or callable. Training augmentation: one of
            `keras_dml.data.preprocessing.AUGMENTATIONS` (`"none"`, `"flip"`, `"crop"`,
            `"crop_flip"`, `"resized_crop"`, `"resized_crop_flip"`, see
            `preprocess_for_train`), or a Keras preprocessing pipeline (e.g.
            `keras.Sequential([keras.layers.RandomRotation(0.05)])`) or other callable,
            applied with `training=True` to every float32 batch `[B, H, W, 3]` in [0, 255]
            after the evaluation transform; its own layers' seeds govern its randomness (their
            generators live in the pipeline, so a resumed run does not replay them).
            Ignored when `training=False`. Defaults to `None` (`dataset.augmentation`:
            `"crop_flip"` for image files, `"none"` in memory).
        drop_remainder: bool. Drop the last partial batch (no sampler). Defaults to `None`
            (`training`: in-batch mining wants full batches).

    Returns:
        `tf.data.Dataset` of `(images float32 [B, H, W, 3] in [0, 255], labels int32 [B])`.

    Examples:
    >>> from keras_dml.data.image_dataset import ImageDataset
    >>> data = ImageDataset([0, 1, 1], images=np.zeros((3, 8, 8, 1), np.uint8), image_size=8)
    >>> [int(b[1].shape[0]) for b in make_tf_dataset(data, batch_size=2)]
    [2, 1]
    """
    augmentation = checked_pipeline_arguments(
        dataset, batch_size, sampler, with_clusters, augmentation
    )
    crop_hw = image_size_hw(image_size or dataset.image_size)
    resize_size = resize_size or dataset.resize_size
    calls = AUTOTUNE if num_parallel_calls is None else num_parallel_calls
    load = _loader(dataset)
    batch_augmentation = None
    per_image = augmentation
    if training and callable(augmentation):
        batch_augmentation = _checked_batch_augmentation(augmentation, crop_hw)
        per_image = "none"

    def transform(image, element_seed):
        if training:
            return preprocess_for_train(image, crop_hw, element_seed, resize_size, per_image)
        return preprocess_for_eval(image, crop_hw, resize_size)

    if sampler is None:
        ds = _index_dataset(dataset, training, shuffle, seed)
        ds = ds.map(
            lambda i, s: (transform(load(i), s), tf.gather(_labels(dataset), i)),
            num_parallel_calls=calls,
        )
        if not dataset.in_memory:
            ds = ds.ignore_errors(log_warning=True)
        ds = ds.batch(
            batch_size, drop_remainder=training if drop_remainder is None else drop_remainder
        )
        if batch_augmentation is not None:
            ds = ds.map(lambda x, y: (batch_augmentation(x), y), num_parallel_calls=calls)
    else:
        ds = _sampler_dataset(dataset, sampler, seed, with_clusters)
        labels = _labels(dataset)

        def load_batch(indices, clusters, batch_seed):
            seeds = tf.random.experimental.stateless_split(batch_seed, num=tf.size(indices))
            images = tf.map_fn(
                lambda args: transform(load(args[0]), args[1]),
                (indices, seeds),
                fn_output_signature=tf.TensorSpec([crop_hw[0], crop_hw[1], 3], tf.float32),
                parallel_iterations=16,
            )
            if batch_augmentation is not None:
                images = batch_augmentation(images)
            batch_labels = tf.gather(labels, indices)
            if with_clusters:
                return images, {"labels": batch_labels, "clusters": clusters}
            return images, batch_labels

        ds = ds.map(load_batch, num_parallel_calls=calls)
        if not dataset.in_memory and not has_fixed_length(sampler):
            ds = ds.ignore_errors(log_warning=True)
    return ds.prefetch(AUTOTUNE)


def _checked_batch_augmentation(augmentation, crop_hw):
    """Wraps a user pipeline as `float32 batch -> float32 batch` after checking its shape once."""
    import keras

    def run(images):
        if isinstance(augmentation, keras.layers.Layer):
            return augmentation(images, training=True)
        return augmentation(images)

    def apply(images):
        return tf.cast(run(images), tf.float32)

    probe = apply(tf.zeros([2, crop_hw[0], crop_hw[1], 3], tf.float32))
    if tuple(probe.shape) != (2, crop_hw[0], crop_hw[1], 3):
        raise ValueError(
            "The `augmentation` pipeline must keep the batch shape [B, "
            f"{crop_hw[0]}, {crop_hw[1]}, 3] (the model's input); resize inside it or pass "
            f"`image_size=`. Received: output shape {tuple(probe.shape)} for [2, {crop_hw[0]}, "
            f"{crop_hw[1]}, 3]"
        )

    def checked(images):
        if keras.backend.backend() == "tensorflow":
            out = apply(images)
        else:
            # Inside tf.data's graph the images are symbolic TensorFlow tensors, which a Keras
            # layer on JAX or PyTorch cannot compute on: run the pipeline eagerly on each batch.
            out = tf.py_function(
                lambda batch: keras.ops.convert_to_numpy(run(batch.numpy())).astype(np.float32),
                [images],
                tf.float32,
            )
        out.set_shape(images.shape)
        return out

    return checked


def _labels(dataset):
    return tf.constant(dataset.labels.astype(np.int32))


def _loader(dataset):
    """Returns `index -> uint8 [H, W, C]` reading files or gathering from memory."""
    if dataset.in_memory:
        images = tf.constant(dataset.images)
        return lambda index: tf.gather(images, index)
    paths = tf.constant(dataset.paths.astype(str))
    return lambda index: decode_image(tf.io.read_file(tf.gather(paths, index)))


def _seeds(seed):
    """An endless dataset of stateless seeds `[2]`, re-randomised every epoch."""
    return tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(2)


def _index_dataset(dataset, training, shuffle, seed):
    indices = tf.data.Dataset.range(len(dataset))
    if training if shuffle is None else shuffle:
        indices = indices.shuffle(len(dataset), seed=seed, reshuffle_each_iteration=True)
    return tf.data.Dataset.zip(indices, _seeds(seed))


def _sampler_dataset(dataset, sampler, seed, with_clusters):
    """Dataset of `(indices int64 [B], clusters int32 [B], seed int64 [2])`, one per batch.

    The seed of batch `step` of an epoch is `batch_seed(seed, epoch, step)`: the same batch of
    the same epoch is augmented alike in an uninterrupted and in a resumed run.
    """
    epochs = SamplerEpochs(sampler, len(dataset), seed)

    def generate():
        for indices, cluster, seed_words in epochs.next_epoch():
            yield indices, np.full(indices.shape, cluster, np.int32), seed_words

    ds = tf.data.Dataset.from_generator(
        generate,
        output_signature=(
            tf.TensorSpec([None], tf.int64),
            tf.TensorSpec([None], tf.int32),
            tf.TensorSpec([2], tf.int64),
        ),
    )
    if has_fixed_length(sampler):
        # Keras then knows the epoch length up front (no "ran out of data" warning, correct
        # progress bars). Skipping a batch here would break that count, so fixed-length sampler
        # pipelines rely on the verification pass that already removed unreadable files.
        ds = ds.apply(tf.data.experimental.assert_cardinality(sampler.num_batches))
    return ds
