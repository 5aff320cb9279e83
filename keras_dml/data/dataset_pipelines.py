"""The input pipelines of an `ImageDataset`: `tf.data` on TensorFlow, a PyDataset elsewhere."""

import keras

from keras_dml.data.pipeline_options import PipelineOptions
from keras_dml.data.py_pipeline import make_py_dataset


class InputPipelines:
    """`ImageDataset.as_dataset` and `as_tf_dataset` (a mixin of `ImageDataset`)."""

    def as_tf_dataset(self, training=False, batch_size=32, sampler=None, **options):
        """Builds the `tf.data` input pipeline (`keras_dml.data.pipeline.make_tf_dataset`).

        Args:
            training: bool. Augment, and by default shuffle and drop the last partial batch.
                Defaults to `False`.
            batch_size: int. Images per batch without a sampler. Defaults to `32`.
            sampler: batch sampler; batches then follow it. Defaults to `None`.
            **options: the other fields of `PipelineOptions` (`image_size`, `seed`, ...).

        Returns:
            `tf.data.Dataset` of `(images float32 [B, H, W, 3] in [0, 255], labels int32 [B])`.
        """
        from keras_dml.data.pipeline import make_tf_dataset  # optional dependency: tensorflow

        return make_tf_dataset(self, PipelineOptions(training, batch_size, sampler, **options))

    def as_dataset(self, training=False, batch_size=32, sampler=None, **options):
        """The input pipeline of the Keras backend: `tf.data` on TensorFlow, else a PyDataset.

        Arguments as `as_tf_dataset`; docs/data.md compares the two pipelines.

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
        if keras.backend.backend() == "tensorflow":
            return self.as_tf_dataset(training, batch_size, sampler, **options)
        return make_py_dataset(self, PipelineOptions(training, batch_size, sampler, **options))
