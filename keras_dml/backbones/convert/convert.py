"""`convert_state_dict`: a PyTorch state dict or Caffe model -> a keras-dml backbone."""

import os

from keras_dml.backbones.build import get
from keras_dml.backbones.conversions import find_conversion
from keras_dml.backbones.convert import (
    bninception,
    caffe_googlenet,
    torchvision_googlenet,
    torchvision_resnet50,
)
from keras_dml.backbones.convert.mapping import check_state_dict, copy_weights
from keras_dml.backbones.convert.state_dict import load_state_dict
from keras_dml.backbones.expected_source import source_file_record
from keras_dml.backbones.imagenet_lookup import write_sha256
from keras_dml.backbones.weights_metadata import write_weights_metadata

# Small enough to build fast; the weights do not depend on the input size.
_BUILD_SHAPE = (64, 64, 3)


# `Conversion.module` -> the module that maps that source's keys onto the backbone's layers.
SOURCE_MODULES = {
    module.__name__.rsplit(".", 1)[1]: module
    for module in (bninception, caffe_googlenet, torchvision_googlenet, torchvision_resnet50)
}


def _check_output(output):
    output = os.fspath(output)
    if not output.endswith(".weights.h5"):
        raise ValueError(
            f"The output must be a Keras weights file ending in '.weights.h5'. Received: {output!r}"
        )
    return output


def convert_state_dict(backbone, source, state_dict, output=None, input_shape=_BUILD_SHAPE):
    """Converts a PyTorch state dict or Caffe model into the keras-dml backbone.

    Args:
        backbone: str. `"googlenet"`, `"resnet50"` or `"bn_inception"`.
        source: str. `"torchvision"`, `"caffe"` or `"bninception"`.
        state_dict: path of a `.pth` / `.pt` file (needs torch) or of a `.caffemodel`, or a dict
            of arrays or tensors.
        output: str or None. `.weights.h5` file to write, recording the backbone, variant and
            source file, with `<output>.sha256` next to it. Defaults to `None`.
        input_shape: tuple. Input shape of the returned model. Defaults to `(64, 64, 3)`.

    Returns:
        The converted `keras.Model`, as `keras_dml.backbones.get` builds it.

    Raises:
        ValueError: an unsupported pair, a file that is no state dict or `.caffemodel`, or a
            missing key, unexpected key or wrong shape.
        ImportError: `state_dict` is a `.pth` file and torch is not installed.

    References:
        He et al., "Deep Residual Learning for Image Recognition", CVPR 2016; Szegedy et al.,
        "Going Deeper with Convolutions", CVPR 2015.
    """
    conversion = find_conversion(backbone, source)
    output = None if output is None else _check_output(output)
    module = SOURCE_MODULES[conversion.module]
    weights = getattr(module, "load_weights", load_state_dict)(state_dict, module.DESCRIPTION)
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
