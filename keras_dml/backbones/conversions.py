"""Which state dicts and Caffe models convert into which keras-dml backbone (no torch import)."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Conversion:
    """One supported conversion: a source's weights -> a keras-dml backbone variant.

    `module`, under `keras_dml.backbones.convert`, holds the layer plan; `download` says where
    users get the weights.
    """

    backbone: str
    source: str
    options: dict
    module: str
    download: str


CONVERSIONS = (
    Conversion(
        "googlenet",
        "torchvision",
        {"variant": "torchvision"},
        "torchvision_googlenet",
        "https://download.pytorch.org/models/googlenet-1378be20.pth",
    ),
    Conversion(
        "googlenet",
        "caffe",
        {"variant": "caffe"},
        "caffe_googlenet",
        "http://dl.caffe.berkeleyvision.org/bvlc_googlenet.caffemodel (the BVLC model zoo's "
        "`bvlc_googlenet`)",
    ),
    Conversion(
        "resnet50",
        "torchvision",
        {"variant": "v1.5"},
        "torchvision_resnet50",
        "https://download.pytorch.org/models/resnet50-0676ba61.pth",
    ),
    Conversion(
        "bn_inception",
        "bninception",
        {},
        "bninception",
        "http://data.lip6.fr/cadene/pretrainedmodels/bn_inception-239d2248.pth (Cadene's "
        "pretrainedmodels `bninception`)",
    ),
)
BACKBONES = tuple(sorted({c.backbone for c in CONVERSIONS}))
SOURCES = tuple(sorted({c.source for c in CONVERSIONS}))


def find_conversion(backbone, source):
    """The `Conversion` of `backbone` from `source` (`ValueError` naming the supported pairs)."""
    for conversion in CONVERSIONS:
        if conversion.backbone == backbone and conversion.source == source:
            return conversion
    pairs = ", ".join(f"{c.backbone} from {c.source}" for c in CONVERSIONS)
    raise ValueError(f"No conversion of backbone {backbone!r} from {source!r}; supported: {pairs}.")


def conversion_for_options(backbone, options):
    """Returns the `Conversion` producing `backbone` built with `options`, or `None`."""
    for conversion in CONVERSIONS:
        wanted = conversion.options.items()
        if conversion.backbone == backbone and all(options.get(k) == v for k, v in wanted):
            return conversion
    return None
