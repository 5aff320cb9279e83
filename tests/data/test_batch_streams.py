"""Batched datasets recognised and iterated without TensorFlow (keras_dml.data.batch_streams)."""

import keras
import numpy as np

from keras_dml import backbones
from keras_dml.data import ImageDataset
from keras_dml.data.batch_streams import is_batch_stream, is_tf_dataset, iterate_batches
from keras_dml.methods.bier.initialization import _features_of
from keras_dml.models.dcml import DCML
from tests.support.helpers import tiny_images, tiny_labels


def image_batches(images, labels, batch_size):
    data = ImageDataset(labels, images=images.astype("uint8"), image_size=images.shape[1])
    return data.as_dataset(training=False, batch_size=batch_size)


def test_arrays_are_not_streams_and_a_py_dataset_is():
    images, labels = tiny_images(7), tiny_labels(7)
    assert not is_batch_stream(images) and not is_tf_dataset(images)
    assert not is_batch_stream([images, labels])
    assert is_batch_stream(image_batches(images, labels, 3))


def test_iterate_batches_serves_one_pass_in_index_order():
    images, labels = np.round(tiny_images(7)), tiny_labels(7)
    batches = list(iterate_batches(image_batches(images, labels, 3)))
    assert [len(batch[1]) for batch in batches] == [3, 3, 1]
    np.testing.assert_array_equal(np.concatenate([batch[1] for batch in batches]), labels)
    np.testing.assert_allclose(np.concatenate([batch[0] for batch in batches]), images)


def test_dcml_compositor_weights_and_bier_features_take_a_py_dataset():
    keras.utils.set_random_seed(0)
    backbone = backbones.get("convnet", input_shape=(32, 32, 3))
    model = DCML(backbone, num_learners=3, learner_dim=8, num_compositors=4)
    images, labels = np.round(tiny_images(10)), tiny_labels(10)
    batches = image_batches(images, labels, 4)
    np.testing.assert_allclose(
        model.compositor_weights(batches), model.compositor_weights(images, batch_size=4), atol=1e-5
    )
    np.testing.assert_allclose(
        _features_of(model, batches, 4), _features_of(model, images, 4), atol=1e-5
    )
