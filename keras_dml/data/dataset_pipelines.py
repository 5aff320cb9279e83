"""The input pipelines of an `ImageDataset`: `tf.data` on TensorFlow, a PyDataset elsewhere."""

import keras

from keras_dml.data.py_pipeline import make_py_dataset


class InputPipelines:
    """`ImageDataset.as_tf_dataset` and `ImageDataset.as_dataset` (a mixin: the host class is
    the `ImageDataset` the pipelines read).
    """

    def as_tf_dataset(
        self,
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
        """Builds the `tf.data` input pipeline; see `keras_dml.data.pipeline.make_tf_dataset`.

        Args:
            training: bool. Augmentation (and by default shuffling and dropping the last
                partial batch) when `True`; when `False`, images at `image_size` pass
                unchanged and others are resized + center cropped. Defaults to `False`.
            batch_size: int. Batch size without a sampler. Defaults to `32`.
            sampler: object with `batch_size`, `num_batches` and `epoch_batches()` (see the
                pipeline module); batches then follow the sampler. Defaults to `None`.
            image_size: int or (height, width). Crop size. Defaults to `None`
                (the dataset's `image_size`).
            resize_size: int. Shorter side before cropping. Defaults to `None` (the
                dataset's `resize_size`, else `image_size * 256 / 224`).
            shuffle: bool. Defaults to `None` (`training`).
            seed: int. Seed of shuffling and augmentation. Defaults to `None`.
            num_parallel_calls: int. Parallel decode calls. Defaults to `None` (AUTOTUNE).
            with_clusters: bool. Yield `(images, {"labels", "clusters"})` from a sampler with
                `yields_clusters=True`. Defaults to `False`.
            augmentation: str or callable. Training augmentation: `"none"`, `"flip"`,
                `"crop"`, `"crop_flip"`, `"resized_crop"`, `"resized_crop_flip"` or a Keras
                preprocessing pipeline applied to each batch. Defaults to `None` (the
                dataset's `augmentation`).
            drop_remainder: bool. Defaults to `None` (`training`).

        Returns:
            `tf.data.Dataset` of `(images float32 [B, H, W, 3] in [0, 255], labels int32 [B])`.

        Examples:
        >>> import numpy as np
        >>> from keras_dml.data import ImageDataset
        >>> ds = ImageDataset([0, 1], images=np.zeros((2, 40, 40, 3), np.uint8), image_size=32)
        >>> images, labels = next(iter(ds.as_tf_dataset(batch_size=2)))
        >>> tuple(images.shape)
        (2, 32, 32, 3)
        """
        from keras_dml.data.pipeline import make_tf_dataset  # optional dependency: tensorflow

        return make_tf_dataset(
            self,
            training=training,
            batch_size=batch_size,
            sampler=sampler,
            image_size=image_size,
            resize_size=resize_size,
            shuffle=shuffle,
            seed=seed,
            num_parallel_calls=num_parallel_calls,
            with_clusters=with_clusters,
            augmentation=augmentation,
            drop_remainder=drop_remainder,
        )

    def as_dataset(
        self,
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
        """The input pipeline of the Keras backend: `tf.data` on TensorFlow, else a PyDataset.

        On the TensorFlow backend this is `as_tf_dataset(...)`; on JAX and PyTorch it is
        `keras_dml.data.py_pipeline.make_py_dataset(self, ...)`, which never imports
        TensorFlow. Both take the same arguments (see `as_tf_dataset`), draw the same sampler
        batches for the same `(seed, epoch, step)` and yield the same batch structure; their
        resize kernels differ by at most 1 grey level (`numpy_preprocessing.EVAL_TOLERANCE`; JPEG
        decoders by a few more). With the PyDataset, pass `shuffle=False` to `model.fit` to keep
        the sampler's batch order (Keras otherwise shuffles the order of a PyDataset's batches).

        Args:
            training: bool. Defaults to `False`.
            batch_size: int. Defaults to `32`.
            sampler: batch sampler. Defaults to `None`.
            image_size: int or (height, width). Defaults to `None`.
            resize_size: int. Defaults to `None`.
            shuffle: bool. Defaults to `None` (`training`).
            seed: int. Defaults to `None`.
            num_parallel_calls: int. Parallel decode calls (`tf.data`) or worker processes
                (PyDataset). Defaults to `None`.
            with_clusters: bool. Defaults to `False`.
            augmentation: str or callable. Defaults to `None`.
            drop_remainder: bool. Defaults to `None` (`training`).

        Returns:
            `tf.data.Dataset` (TensorFlow backend) or `keras.utils.PyDataset` of `(images
            float32 [B, H, W, 3] in [0, 255], labels int32 [B])`.

        Examples:
        >>> import numpy as np
        >>> from keras_dml.data import ImageDataset
        >>> ds = ImageDataset([0, 1], images=np.zeros((2, 40, 40, 3), np.uint8), image_size=32)
        >>> images, labels = next(iter(ds.as_dataset(batch_size=2)))
        >>> tuple(images.shape)
        (2, 32, 32, 3)
        """
        arguments = dict(
            training=training,
            batch_size=batch_size,
            sampler=sampler,
            image_size=image_size,
            resize_size=resize_size,
            shuffle=shuffle,
            seed=seed,
            num_parallel_calls=num_parallel_calls,
            with_clusters=with_clusters,
            augmentation=augmentation,
            drop_remainder=drop_remainder,
        )
        if keras.backend.backend() == "tensorflow":
            return self.as_tf_dataset(**arguments)
        return make_py_dataset(self, **arguments)
