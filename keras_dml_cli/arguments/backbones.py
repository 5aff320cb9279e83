"""`keras-dml backbones convert`'s arguments (the run: `keras_dml_cli.run.backbones`)."""

from keras_dml_cli.catalogue import catalogue


def add_backbones_parser(subparsers):
    """Adds `backbones convert` to the `keras-dml` sub-commands; returns its parser."""
    backbones = subparsers.add_parser(
        "backbones",
        help="backbone weights: convert published PyTorch ImageNet weights",
        description="Backbone weights for keras_dml.backbones.get.",
    )
    commands = backbones.add_subparsers(dest="backbones_command", metavar="{convert}")
    commands.required = True
    pairs = ", ".join(
        f"{name} from {source}"
        for name, sources in catalogue()["backbone_conversions"].items()
        for source in sources
    )
    convert = commands.add_parser(
        "convert",
        help="convert a PyTorch state dict into a .weights.h5 file",
        description=(
            "Convert a PyTorch state dict into a Keras weights file for "
            "keras_dml.backbones.get(NAME, weights=PATH) (the file records the variant it "
            f"fits; a PATH.sha256 is written next to it). Supported: {pairs}. Reading a .pth "
            "file needs torch. Write to $KERAS_HOME/keras_dml/backbones/"
            "<name>_<variant>_imagenet.weights.h5 to make weights='imagenet' find it."
        ),
    )
    convert.add_argument(
        "--backbone", required=True, choices=sorted(catalogue()["backbone_conversions"])
    )
    sources = sorted({s for names in catalogue()["backbone_conversions"].values() for s in names})
    convert.add_argument(
        "--from", dest="source", required=True, choices=sources, help="origin of the state dict"
    )
    convert.add_argument(
        "--state-dict", required=True, help="the .pth / .pt file (--from caffe: the .caffemodel)"
    )
    convert.add_argument("--output", required=True, help="PATH.weights.h5 to write")
    return backbones
