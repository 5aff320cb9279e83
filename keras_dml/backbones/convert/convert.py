"""`convert_state_dict`: a PyTorch state dict (or a Caffe model) -> a keras-dml backbone and its
weights file. A source module reads its file with its own `load_weights` when it has one
(`caffe_googlenet`: a `.caffemodel`), else with `load_state_dict` (a `.pth` / `.pt` file)."""

import importlib
import os

from keras_dml.backbones.build import get
from keras_dml.backbones.conversions import find_conversion
from keras_dml.backbones.convert.mapping import check_state_dict, copy_weights
from keras_dml.backbones.convert.state_dict import load_state_dict
from keras_dml.backbones.expected_source import source_file_record
from keras_dml.backbones.imagenet_lookup import write_sha256
from keras_dml.backbones.weights_metadata import write_weights_metadata

# Small enough to build fast; the weights do not depend on the input size.
_BUILD_SHAPE = (64, 64, 3)


def _check_output(output):
    output = os.fspath(output)
    if not output.endswith(".weights.h5"):
        raise ValueError(
            f"The output must be a Keras weights file ending in '.weights.h5'. Received: {output!r}"
        )
    return output


def convert_state_dict(backbone, source, state_dict, output=None, input_shape=_BUILD_SHAPE):
    """Converts a PyTorch state dict or Caffe model into the keras-dml backbone with its outputs.

    The Keras backbone takes raw RGB pixels in [0, 255] and gives the final feature map of
    the source network fed the same image with its documented preprocessing; the
    preprocessing lives in the backbone's `ImageNormalization` layer. Supported:
    `googlenet` from `torchvision` (variant "torchvision"), `googlenet` from `caffe` (the
    original `bvlc_googlenet.caffemodel`, variant "caffe", read without Caffe), `resnet50`
    from `torchvision` (variant "v1.5") and `bn_inception` from `bninception` (Cadene's
    pretrainedmodels port).

    Args:
        backbone: str. `"googlenet"`, `"resnet50"` or `"bn_inception"`.
        source: str. `"torchvision"`, `"caffe"` or `"bninception"`.
        state_dict: path of a `.pth` / `.pt` file (needs torch), of a `.caffemodel` file for
            `source="caffe"`, or a dict of arrays/tensors.
        output: str or None. Path of a `.weights.h5` file to write, with the backbone and
            variant it was converted for recorded inside (see
            `keras_dml.backbones.weights_metadata`), with the name, sha256 and sha1 of the
            `state_dict` file (which a recipe's expected source is checked against), and its
            own sha256 in `<output>.sha256`.
            Defaults to `None` (nothing written).
        input_shape: tuple. Input shape of the returned model. Defaults to `(64, 64, 3)`.

    Returns:
        The converted `keras.Model` (as built by `keras_dml.backbones.get`).

    Raises:
        ValueError: for an unsupported pair, or a state dict with a missing key, an
            unexpected key or a wrong shape (one line naming the first mismatch).
        ImportError: when `state_dict` is a file and torch is not installed.

    Examples:
    >>> model = convert_state_dict("resnet50", "torchvision", "resnet50-0676ba61.pth",
    ...                            output="resnet50_v1.5_imagenet.weights.h5")  # doctest: +SKIP

    References:
        He et al., "Deep Residual Learning for Image Recognition", CVPR 2016; Szegedy et al.,
        "Going Deeper with Convolutions", CVPR 2015; Ioffe & Szegedy, "Batch Normalization",
        ICML 2015.
    """
    conversion = find_conversion(backbone, source)
    output = None if output is None else _check_output(output)
    module = importlib.import_module(f"keras_dml.backbones.convert.{conversion.module}")
    weights = getattr(module, "load_weights", load_state_dict)(state_dict)
    model = get(backbone, input_shape=input_shape, **conversion.options)
    plan = module.plan(model)
    check_state_dict(weights, model, plan, module.IGNORED_PREFIXES, module.DESCRIPTION)
    copy_weights(weights, model, plan)
    if output is not None:
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        model.save_weights(output)
        source_file = (
            source_file_record(state_dict) if isinstance(state_dict, (str, os.PathLike)) else None
        )
        write_weights_metadata(output, backbone, conversion.options, source, source_file)
        write_sha256(output)
    return model
