"""Tests of keras_dml.backbones: get, split_points, options, BatchNorm, freeze_batchnorm."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_dml import backbones, layers
from keras_dml.layers.image_normalization import ImageNormalization
from tests.support.helpers import roundtrip, tiny_images

SMALL = {"convnet": 32, "googlenet": 64, "bn_inception": 64, "mobilenet_v2": 64, "resnet50": 64}
SMALL["vgg_small"] = 32
# GoogLeNet "caffe" subtracts bvlc_googlenet's own mean: a "custom" layer.
MODES = {"convnet": "tf", "mobilenet_v2": "tf", "resnet50": "caffe"}
MODES["vgg_small"] = "tf"
# Options giving every backbone BatchNorm layers (GoogLeNet has none by default).
WITH_BN = {"googlenet": {"batchnorm": True}, "mobilenet_v2": {"alpha": 0.35}}


def _np(x):
    return keras.ops.convert_to_numpy(x)


def test_list_backbones():
    # keras_hub builds from a preset folder (tests/backbones/hub/).
    assert backbones.list_backbones() == sorted([*SMALL, "keras_hub"])
    assert set(backbones.list_backbones(verbose=True)) == {*SMALL, "keras_hub"}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_forward_backward_and_split_points(name):
    keras.utils.set_random_seed(0)
    size = SMALL[name]
    model = backbones.get(name, input_shape=(size, size, 3))
    assert model.name == name and model.input_shape == (None, size, size, 3)
    assert isinstance(model.layers[1], ImageNormalization)
    assert model.layers[1].mode == MODES.get(name, "custom")
    images = tiny_images(n=2, size=size)
    with tf.GradientTape() as tape:
        features = model(images, training=True)
        loss = keras.ops.mean(keras.ops.square(features))
    grads = tape.gradient(loss, model.trainable_weights)
    assert len(features.shape) == 4 and features.shape[0] == 2
    assert all(g is not None and np.all(np.isfinite(_np(g))) for g in grads)
    assert any(np.any(_np(g) != 0) for g in grads)
    points = backbones.split_points(name)
    assert points["features"] == model.layers[-1].name
    for layer_name in points.values():
        model.get_layer(layer_name)


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "googlenet",
            {"conv1": (112, 112, 64), "pool2": (28, 28, 192), "inception_3b": (28, 28, 480)}
            | {"pool3": (14, 14, 480), "inception_4e": (14, 14, 832)}
            | {"pool4": (7, 7, 832), "features": (7, 7, 1024)},
        ),
        (
            "bn_inception",
            {"inception_3b": (28, 28, 320), "inception_3c": (14, 14, 576)}
            | {"inception_4e": (7, 7, 1056), "features": (7, 7, 1024)},
        ),
        (
            "resnet50",
            {"conv2": (56, 56, 256), "conv3": (28, 28, 512), "conv4": (14, 14, 1024)}
            | {"features": (7, 7, 2048)},
        ),
        ("mobilenet_v2", {"block_5": (28, 28, 32), "features": (7, 7, 1280)}),
    ],
)
def test_split_point_shapes_at_224(name, expected):
    model = backbones.get(name)
    points = backbones.split_points(name)
    for point, shape in expected.items():
        assert tuple(model.get_layer(points[point]).output.shape[1:]) == shape, point


def test_convnet_options():
    model = backbones.get("convnet", input_shape=(32, 32, 1), width=8, pool_last=True)
    assert model.output_shape == (None, 2, 2, 64)
    assert model.get_layer("block3").output.shape[-1] == 32
    slim = backbones.get("mobilenet_v2", input_shape=(32, 32, 3), alpha=0.5)
    assert slim.get_layer("block_16_project_BN").output.shape[-1] == 160


def test_vgg_small_blocks_and_options():
    model = backbones.get("vgg_small", input_shape=(32, 32, 3))
    assert model.output_shape == (None, 4, 4, 256)
    convs = [la for la in model.layers if isinstance(la, keras.layers.Conv2D)]
    assert [c.filters for c in convs] == [64, 64, 128, 128, 256, 256]
    assert model.count_params() == 1_148_096
    assert tuple(model.get_layer("block2").output.shape[1:]) == (8, 8, 128)
    slim = backbones.get("vgg_small", input_shape=(64, 64, 1), width=(8, 16), convs_per_block=3)
    assert slim.output_shape == (None, 16, 16, 16) and len(slim.layers) == 2 + 2 * (3 * 3 + 1)
    assert backbones.split_points("vgg_small", width=(8, 16))["features"] == "block2"
    head = backbones.cut(model, end="block2")
    assert head.output_shape == (None, 8, 8, 128)
    with pytest.raises(ValueError, match="convs_per_block"):
        backbones.get("vgg_small", input_shape=(32, 32, 3), convs_per_block=0)
    with pytest.raises(ValueError, match="no ImageNet weights"):
        backbones.get("vgg_small", weights="imagenet", input_shape=(32, 32, 3))


def _momenta(model):
    return {la.momentum for la in model.layers if isinstance(la, keras.layers.BatchNormalization)}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_every_backbone_uses_the_batchnorm_momentum_asked_for(name):
    size = SMALL[name]
    options = WITH_BN.get(name, {})
    default = backbones.get(name, input_shape=(size, size, 3), **options)
    assert _momenta(default) == {0.9}
    model = backbones.get(name, input_shape=(size, size, 3), batchnorm_momentum=0.7, **options)
    assert _momenta(model) == {0.7}
    rebuilt = keras.Model.from_config(model.get_config())
    assert _momenta(rebuilt) == {0.7}


def test_batchnorm_momentum_survives_keras_file_and_drives_the_update():
    keras.utils.set_random_seed(0)
    model = backbones.get("convnet", input_shape=(32, 32, 3), width=4, batchnorm_momentum=0.25)
    assert _momenta(roundtrip(model)) == {0.25}
    conv = keras.Model(model.input, model.get_layer("block1_conv").output)
    images = tiny_images(n=4, size=32)
    batch_mean = _np(keras.ops.mean(conv(images), axis=(0, 1, 2)))
    model(images, training=True)
    moving = _np(model.get_layer("block1_conv_bn").moving_mean)
    np.testing.assert_allclose(moving, 0.75 * batch_mean, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match=r"batchnorm_momentum=1.5"):
        backbones.get("convnet", input_shape=(32, 32, 3), batchnorm_momentum=1.5)


def test_googlenet_lrn_matches_tensorflow_and_batchnorm_variant():
    plain = backbones.get("googlenet", input_shape=(32, 32, 3))
    assert isinstance(plain.get_layer("pool1"), layers.LocalResponseNormalization)
    assert not any(isinstance(la, keras.layers.BatchNormalization) for la in plain.layers)
    bn = backbones.get("googlenet", input_shape=(32, 32, 3), batchnorm=True)
    assert isinstance(bn.get_layer("pool1"), keras.layers.MaxPooling2D)
    assert isinstance(bn.get_layer("inception_4e_5x5_bn"), keras.layers.BatchNormalization)
    x = np.random.default_rng(0).random((2, 3, 3, 16)).astype("float32") * 50
    ours = layers.LocalResponseNormalization(size=5, alpha=1e-2, beta=0.75)(x)
    ref = tf.nn.local_response_normalization(x, depth_radius=2, bias=1.0, alpha=1e-2 / 5, beta=0.75)
    np.testing.assert_allclose(_np(ours), ref.numpy(), rtol=1e-5)


@pytest.mark.parametrize(
    "name, size, kwargs",
    [
        ("convnet", 32, {}),
        ("vgg_small", 32, {}),
        ("googlenet", 32, {}),
        ("mobilenet_v2", 32, {"alpha": 0.35}),
    ],
)
def test_keras_roundtrip(name, size, kwargs):
    keras.utils.set_random_seed(1)
    model = backbones.get(name, input_shape=(size, size, 3), freeze_batchnorm=True, **kwargs)
    images = tiny_images(n=2, size=size)
    reloaded = roundtrip(model)
    np.testing.assert_allclose(_np(reloaded(images)), _np(model(images)), atol=1e-5)
    assert reloaded.name == name
    assert [la.name for la in reloaded.layers] == [la.name for la in model.layers]
    frozen = [la for la in reloaded.layers if isinstance(la, keras.layers.BatchNormalization)]
    assert all(not la.trainable for la in frozen)


@pytest.mark.parametrize("freeze", [True, False])
def test_freeze_batchnorm_keeps_statistics(freeze):
    keras.utils.set_random_seed(2)
    model = backbones.get("convnet", input_shape=(32, 32, 3), freeze_batchnorm=freeze, width=8)
    bns = [la for la in model.layers if isinstance(la, keras.layers.BatchNormalization)]
    assert len(bns) == 4
    stats = [_np(w).copy() for bn in bns for w in bn.weights]
    kernel = _np(model.get_layer("block1_conv").kernel).copy()
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    images = tiny_images(n=8, size=32)
    model.fit(images, np.ones((8, 4, 4, 64), "float32"), batch_size=8, epochs=1, verbose=0)
    after = [_np(w) for bn in bns for w in bn.weights]
    assert not np.allclose(kernel, _np(model.get_layer("block1_conv").kernel))
    unchanged = all(np.array_equal(b, a) for b, a in zip(stats, after))
    assert unchanged == freeze
    assert backbones.freeze_batchnorm(model) == 4


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        (("resnet5",), {}, ValueError, "Did you mean 'resnet50'.*Known backbones"),
        (("googlenet",), {"alpha": 1.0}, ValueError, r"no option\(s\) \['alpha'\]"),
        (("googlenet",), {"input_shape": (16, 16, 3)}, ValueError, "at least 32x32"),
        (("resnet50",), {"input_shape": (64, 64, 1)}, ValueError, "3-channel"),
        (("convnet",), {"input_shape": (32, 32)}, ValueError, "height, width, channels"),
        (("convnet",), {"width": (8, 8)}, ValueError, "4 positive ints"),
        (("convnet",), {"weights": "/nonexistent/x.weights.h5"}, FileNotFoundError, "not found"),
        (("convnet",), {"weights": 3}, ValueError, "must be None"),
        (("mobilenet_v2",), {"weights": "imagenet", "alpha": 0.6}, ValueError, "alpha in"),
        (("bn_inception",), {"input_shape": (80, 80, 3)}, ValueError, "multiple of 32"),
    ],
)
def test_argument_errors(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        backbones.get(*args, **kwargs)


def test_split_points_errors():
    with pytest.raises(ValueError, match="Known backbones"):
        backbones.split_points("googlenet_v1")
    with pytest.raises(ValueError, match="no option"):
        backbones.split_points("resnet50", alpha=1.0)
