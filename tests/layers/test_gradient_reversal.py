import keras
import numpy as np
import pytest

from keras_dml.layers.gradient_reversal import GradientReversal
from tests.support.backend_utils import gradients, to_numpy
from tests.support.helpers import check_layer


@pytest.mark.parametrize("lambda_", [0.0, 0.5, 1.0, 3.0])
def test_forward_identity_and_reversed_gradient(lambda_):
    x = np.random.default_rng(0).normal(size=(4, 5)).astype("float32")
    layer = GradientReversal(lambda_=lambda_)
    np.testing.assert_allclose(to_numpy(layer(x)), x, rtol=1e-6, atol=1e-6)
    (gradient,) = gradients(lambda x: keras.ops.sum(layer(x) * 2.0), [x])
    np.testing.assert_allclose(gradient, np.full(x.shape, -2.0 * lambda_), atol=1e-6)


def test_serialization_roundtrip():
    check_layer(GradientReversal(lambda_=0.25), (3,))
    assert GradientReversal.from_config(GradientReversal(0.25).get_config()).lambda_ == 0.25


@pytest.mark.parametrize("bad", [-1.0, "x", None])
def test_invalid_lambda(bad):
    with pytest.raises(ValueError, match="lambda_"):
        GradientReversal(lambda_=bad)
