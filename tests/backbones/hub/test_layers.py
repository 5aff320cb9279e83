"""The layers that carry a keras-hub graph: wrapped keras-hub layers and the token maps."""

import keras
import numpy as np
import pytest

keras_hub = pytest.importorskip("keras_hub")

from keras_hub.src.models.vit.vit_layers import (  # noqa: E402
    ViTEncoderBlock,
    ViTPatchingAndEmbedding,
)

from keras_dml.backbones.hub.layers import KerasHubLayer, MapToTokens, TokensToMap  # noqa: E402


def test_a_wrapped_layer_loads_back_from_its_config_although_keras_hub_configs_do_not():
    patching = ViTPatchingAndEmbedding(image_size=(16, 16), patch_size=(8, 8), hidden_dim=4)
    with pytest.raises(TypeError):  # keras-hub's own config holds sizes its __init__ refuses
        ViTPatchingAndEmbedding.from_config(patching.get_config())
    wrapped = KerasHubLayer.wrapping(patching)
    images = np.random.default_rng(0).normal(size=(2, 16, 16, 3)).astype("float32")
    expected = keras.ops.convert_to_numpy(wrapped(images))
    copy = KerasHubLayer.from_config(wrapped.get_config())
    copy.build((None, 16, 16, 3))
    copy.set_weights(wrapped.get_weights())
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(copy(images)), expected)


def test_only_keras_hub_classes_are_wrapped():
    with pytest.raises(ValueError, match="wraps keras-hub layers only"):
        KerasHubLayer("keras.layers.Dense", {"units": 2})


def test_a_wrapped_block_computes_what_the_block_computes():
    block = ViTEncoderBlock(num_heads=2, hidden_dim=8, mlp_dim=16)
    tokens = np.random.default_rng(1).normal(size=(2, 5, 8)).astype("float32")
    expected = keras.ops.convert_to_numpy(block(tokens))
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(KerasHubLayer.wrapping(block)(tokens)), expected
    )


def test_tokens_become_patches_next_to_the_class_token_and_come_back_exactly():
    rng = np.random.default_rng(2)
    tokens = rng.normal(size=(2, 1 + 6, 3)).astype("float32")  # class token + 2 x 3 patches
    token_map = keras.ops.convert_to_numpy(TokensToMap((2, 3))(tokens))
    assert token_map.shape == (2, 2, 3, 6)
    np.testing.assert_array_equal(token_map[:, 1, 2, :3], tokens[:, 1 + 5])  # row 1, column 2
    np.testing.assert_array_equal(token_map[:, 0, 1, 3:], tokens[:, 0])  # the class token
    back = keras.ops.convert_to_numpy(MapToTokens()(token_map))
    np.testing.assert_allclose(back, tokens, rtol=0, atol=1e-6)


def test_register_tokens_are_dropped_from_the_map():
    tokens = np.arange(2 * (1 + 2 + 4) * 3, dtype="float32").reshape(2, 7, 3)
    token_map = keras.ops.convert_to_numpy(TokensToMap((2, 2), prefix_tokens=3)(tokens))
    np.testing.assert_array_equal(token_map[:, :, :, :3].reshape(2, 4, 3), tokens[:, 3:])
