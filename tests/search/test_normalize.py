"""The library's one `l2_normalize`: NumPy arrays stay NumPy on the host, tensors use keras.ops."""

import keras
import numpy as np

from keras_dml.pairs.distances import l2_normalize


def test_a_numpy_array_is_normalised_in_numpy_as_the_search_did():
    x = np.random.default_rng(0).normal(size=(50, 7)).astype(np.float32)
    out = l2_normalize(x)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    expected = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(l2_normalize(x.astype(np.float64)), expected)
    assert not np.any(l2_normalize(np.zeros((2, 3), np.float32)))


def test_a_tensor_is_normalised_with_keras_ops():
    x = np.random.default_rng(1).normal(size=(6, 4)).astype(np.float32)
    out = l2_normalize(keras.ops.convert_to_tensor(x))
    assert not isinstance(out, np.ndarray)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(out), l2_normalize(x), rtol=1e-6)
