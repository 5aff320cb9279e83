"""The `.caffemodel` reader decodes the protobuf wire format without Caffe.

Files come from the test-side encoder (tests/support/caffemodel_encoder.py): floats packed and
unpacked, `shape` and the legacy 4-D fields, new-style `layer` and V1 `layers` must all read
back the arrays written; bytes that are not a NetParameter are refused in one line.
"""

import numpy as np
import pytest

from keras_dml.backbones.convert.caffe_googlenet import state_dict_from_layers
from keras_dml.backbones.convert.caffemodel import read_caffemodel
from tests.support.caffemodel_encoder import encode_net, write_caffemodel


@pytest.fixture(scope="module")
def layers():
    rng = np.random.default_rng(0)

    def normal(*shape):
        return rng.normal(size=shape).astype("float32")

    return {
        "data": [],
        "conv1/7x7_s2": [normal(4, 3, 7, 5), normal(4)],
        "loss3/classifier": [normal(10, 16), normal(10)],
    }


def _assert_reads_back(read, layers):
    assert list(read) == list(layers)
    for name, blobs in layers.items():
        assert len(read[name]) == len(blobs)
        for got, written in zip(read[name], blobs):
            assert got.dtype == np.float32
            np.testing.assert_array_equal(got, written)


@pytest.mark.parametrize("packed", [True, False], ids=["packed", "unpacked"])
@pytest.mark.parametrize("v1", [False, True], ids=["layer", "v1_layers"])
def test_reads_back_what_the_encoder_wrote(layers, packed, v1, tmp_path):
    path = write_caffemodel(tmp_path / "net.caffemodel", layers, v1=v1, packed=packed)
    _assert_reads_back(read_caffemodel(path), layers)


def test_legacy_shapes_read_as_four_dims_and_biases_flatten(layers):
    read = read_caffemodel(encode_net(layers, v1=True, legacy_shape=True))
    assert read["conv1/7x7_s2"][0].shape == (4, 3, 7, 5)
    assert read["conv1/7x7_s2"][1].shape == (1, 1, 1, 4)
    state = state_dict_from_layers(read)
    np.testing.assert_array_equal(state["conv1/7x7_s2.bias"], layers["conv1/7x7_s2"][1])
    assert state["loss3/classifier.weight"].shape == (1, 1, 10, 16)


def test_a_v1_file_reads_the_same_as_a_new_style_one(layers):
    new_style = read_caffemodel(encode_net(layers))
    _assert_reads_back(read_caffemodel(encode_net(layers, v1=True)), new_style)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"", "holds no layers"),
        (b"PK\x03\x04 a zip archive, e.g. a .pth file", "is not a Caffe .caffemodel"),
        (encode_net({"conv": [np.zeros((2, 3))]})[:-3], "runs past the end"),
        (b"\xa2\x06\x03\x0a\x01\xff", "not UTF-8"),
    ],
    ids=["empty", "pth", "truncated", "binary_name"],
)
def test_other_bytes_are_refused_in_one_line(data, match):
    with pytest.raises(ValueError, match=match) as info:
        read_caffemodel(data)
    assert "\n" not in str(info.value)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="bvlc_googlenet.caffemodel"):
        read_caffemodel(tmp_path / "bvlc_googlenet.caffemodel")
