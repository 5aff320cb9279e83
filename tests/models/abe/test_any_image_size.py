"""Models built with unknown height and width, `(None, None, 3)`, embed images of any size.

ABE's reshape of the attended maps used to read h and w from the static shape: on TensorFlow a
model built at `(None, None, 3)` failed at its first call.
"""

import keras
import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.methods import get_method, list_methods
from keras_dml.models.abe import ABE
from tests.support.helpers import tiny_images, tiny_labels


def convnet(input_shape):
    keras.utils.set_random_seed(0)
    return backbones.get("convnet", input_shape=input_shape)


def images(size, n=2):
    rng = np.random.default_rng(size)
    return rng.uniform(0, 255, (n, size, size, 3)).astype("float32")


@pytest.mark.parametrize("method", list_methods())
def test_a_model_built_at_unknown_size_embeds_every_size_like_a_fixed_size_model(method):
    spec = get_method(method)
    model = spec.tiny_model(convnet((None, None, 3)))
    fixed = spec.tiny_model(convnet((32, 32, 3)))
    fixed.set_weights(model.get_weights())
    for size in (32, 48, 40):
        output = model.predict(images(size), verbose=0)
        assert output.shape == (2, model.embedding_dim) and np.isfinite(output).all()
    np.testing.assert_allclose(
        model.predict(images(32), verbose=0), fixed.predict(images(32), verbose=0), atol=1e-5
    )


def test_abe_at_unknown_size_trains_and_draws_attention_maps_at_the_given_size():
    model = ABE(convnet((None, None, 3)), num_learners=2, embedding_dim=16)
    model.compile(optimizer=keras.optimizers.SGD(1e-3, momentum=0.9))
    x = keras.ops.convert_to_numpy(keras.ops.image.resize(tiny_images(8), (40, 40)))
    history = model.fit(x, tiny_labels(8), batch_size=8, verbose=0).history
    assert np.isfinite(history["loss"][0])
    assert model.attention_maps(images(40)).shape == (2, 2, 40, 40)
    assert model.attention_maps(images(48)).shape == (2, 2, 48, 48)
