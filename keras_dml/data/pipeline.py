"""The `tf.data` input pipeline behind `ImageDataset.as_tf_dataset` (see docs/data.md)."""

import numpy as np
import tensorflow as tf

from keras_dml.data.pipeline_options import PipelineOptions, check_batch_shape
from keras_dml.data.preprocessing import decode_image, preprocess_for_eval, preprocess_for_train
from keras_dml.data.sampler_epochs import SamplerEpochs, has_fixed_length

AUTOTUNE = tf.data.AUTOTUNE


def make_tf_dataset(dataset, options=None):
    """Builds a batched, prefetched `tf.data.Dataset` from an `ImageDataset`.

    Args:
        dataset: `ImageDataset`.
        options: `PipelineOptions`. Defaults to `None` (`PipelineOptions()`).

    Returns:
        `tf.data.Dataset` of `(images float32 [B, H, W, 3] in [0, 255], labels int32 [B])`.

    Examples:
    >>> from keras_dml.data.image_dataset import ImageDataset
    >>> data = ImageDataset([0, 1, 1], images=np.zeros((3, 8, 8, 1), np.uint8), image_size=8)
    >>> [int(b[1].shape[0]) for b in make_tf_dataset(data, PipelineOptions(batch_size=2))]
    [2, 1]
    """
    options = (options or PipelineOptions()).resolve(dataset)
    crop_hw = options.image_size
    calls = AUTOTUNE if options.num_parallel_calls is None else options.num_parallel_calls
    load = _loader(dataset)
    per_image = options.image_augmentation
    batch_augmentation = options.batch_augmentation
    if batch_augmentation is not None:
        batch_augmentation = _checked_batch_augmentation(batch_augmentation, crop_hw)

    def transform(image, element_seed):
        if per_image is None:
            return preprocess_for_eval(image, crop_hw, options.resize_size)
        return preprocess_for_train(image, crop_hw, element_seed, options.resize_size, per_image)

    if options.sampler is None:
        ds = _index_dataset(dataset, options.shuffle, options.seed)
        ds = ds.map(
            lambda i, s: (transform(load(i), s), tf.gather(_labels(dataset), i)),
            num_parallel_calls=calls,
        )
        if not dataset.in_memory:
            ds = ds.ignore_errors(log_warning=True)
        ds = ds.batch(options.batch_size, drop_remainder=options.drop_remainder)
        if batch_augmentation is not None:
            ds = ds.map(lambda x, y: (batch_augmentation(x), y), num_parallel_calls=calls)
    else:
        ds = _sampler_dataset(dataset, options.sampler, options.seed)
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
            if options.with_clusters:
                return images, {"labels": batch_labels, "clusters": clusters}
            return images, batch_labels

        ds = ds.map(load_batch, num_parallel_calls=calls)
        if not dataset.in_memory and not has_fixed_length(options.sampler):
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

    check_batch_shape(apply(tf.zeros([2, crop_hw[0], crop_hw[1], 3], tf.float32)).shape, crop_hw)

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


def _index_dataset(dataset, shuffle, seed):
    indices = tf.data.Dataset.range(len(dataset))
    if shuffle:
        indices = indices.shuffle(len(dataset), seed=seed, reshuffle_each_iteration=True)
    return tf.data.Dataset.zip(indices, _seeds(seed))


def _sampler_dataset(dataset, sampler, seed):
    """Dataset of `(indices int64 [B], clusters int32 [B], batch_seed(seed, epoch, step))`."""
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
