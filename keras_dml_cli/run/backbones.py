"""`keras-dml backbones convert`: published ImageNet weights -> a backbone weights file."""

from keras_dml.backbones.conversions import find_conversion
from keras_dml.backbones.convert import convert_state_dict
from keras_dml.backbones.imagenet_lookup import read_sha256

__all__ = ["run_backbones"]


def run_backbones(args):
    """Runs `keras-dml backbones convert`; returns the exit code (errors propagate to `main`)."""
    conversion = find_conversion(args.backbone, args.source)
    convert_state_dict(args.backbone, args.source, args.state_dict, output=args.output)
    options = "".join(f", {key}={value!r}" for key, value in conversion.options.items())
    print(
        f"Wrote {args.output} (sha256 {read_sha256(args.output + '.sha256')}). Load it with "
        f"keras_dml.backbones.get({args.backbone!r}, weights={args.output!r}) (builds"
        f"{options or ' the backbone'})."
    )
    return 0
