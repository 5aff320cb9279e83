"""Training-step time of a keras-hub ResNet-50 against keras-dml's own ResNet-50 v1.5.

Both are `EmbeddingModel`s with the same loss, input size and batch, from random initialisation:
one on `backbones.get("resnet50", variant="v1.5")`, one on `backbones.get("keras_hub", preset=P)`
with P keras-hub's `ResNetBackbone` in its resnet_50 configuration (`RESNET_50`, saved as a preset
folder; no download), or `--preset` for another. Rounds alternate between the models so that
load from other processes affects both alike; each round times `steps` calls of
`train_on_batch` after warm-up. The record holds the median step time of each model and their
ratio (keras-hub / keras-dml).

Usage:
    python -m benchmarks.speed.hub_backbone_step
    python -m benchmarks.speed.hub_backbone_step --image-size 224 --batch-size 64 \
        --preset kaggle://keras/resnetv1/keras/resnet_50_imagenet/3
"""

import argparse
import os
import statistics
import tempfile

import keras
import numpy as np

from benchmarks.records import add_record_option, write_record
from benchmarks.speed.train_step import time_steps

# keras-hub's resnet_50 preset configuration (`keras_hub.models.ResNetBackbone`).
RESNET_50 = {
    "input_conv_filters": [64],
    "input_conv_kernel_sizes": [7],
    "stackwise_num_filters": [64, 128, 256, 512],
    "stackwise_num_blocks": [3, 4, 6, 3],
    "stackwise_num_strides": [1, 2, 2, 2],
    "block_type": "bottleneck_block",
    "use_pre_activation": False,
    "image_shape": (None, None, 3),
}
# torchvision's ImageNet mean and std as a keras-hub converter's `x * scale + offset`: the same
# input normalisation as keras-dml's ResNet-50 v1.5.
SCALE = [1 / (255.0 * std) for std in (0.229, 0.224, 0.225)]
OFFSET = [-mean / std for mean, std in zip((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))]


def resnet50_preset(folder, image_size):
    """Saves keras-hub's ResNet-50 (`RESNET_50`, random weights) as a preset folder."""
    import keras_hub

    os.makedirs(folder, exist_ok=True)
    keras_hub.models.ResNetBackbone(**RESNET_50).save_to_preset(folder)
    converter = keras_hub.layers.ResNetImageConverter(
        image_size=(image_size, image_size), scale=SCALE, offset=OFFSET
    )
    converter.save_to_preset(folder)
    return folder


def build_models(backbone, variant, preset, image_size, embedding_dim, loss):
    """`{"keras_dml": model, "keras_hub": model}`: compiled `EmbeddingModel`s on each backbone."""
    from keras_dml import backbones, losses
    from keras_dml.backbones.registry import get_spec
    from keras_dml.models import EmbeddingModel

    shape = (image_size, image_size, 3)
    options = {"variant": variant} if "variant" in get_spec(backbone).options else {}
    builders = {
        "keras_dml": lambda: backbones.get(backbone, input_shape=shape, **options),
        "keras_hub": lambda: backbones.get("keras_hub", preset=preset, input_shape=shape),
    }
    models = {}
    for name, build in builders.items():
        keras.utils.set_random_seed(0)
        model = EmbeddingModel(build(), embedding_dim=embedding_dim)
        model.compile(optimizer=keras.optimizers.Adam(1e-4), loss=losses.get(loss))
        models[name] = model
    return models


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backbone", default="resnet50", help="keras-dml's backbone")
    parser.add_argument("--variant", default="v1.5", help="its variant, where it has one")
    parser.add_argument(
        "--preset",
        default=None,
        help="keras-hub preset folder or handle (default: RESNET_50 saved to a temporary folder)",
    )
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--m-per-class", type=int, default=4)
    parser.add_argument("--embedding-dim", type=int, default=128)
    parser.add_argument("--loss", default="margin", help="keras_dml.losses name")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=10)
    add_record_option(parser, "speed_hub_backbone_step.json")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    num_classes = args.batch_size // args.m_per_class
    rng = np.random.default_rng(0)
    size = args.image_size
    images = (rng.random((args.batch_size, size, size, 3)) * 255).astype("float32")
    labels = np.repeat(np.arange(num_classes), args.m_per_class).astype("int32")
    with tempfile.TemporaryDirectory() as folder:
        preset = args.preset or resnet50_preset(os.path.join(folder, "resnet_50"), size)
        models = build_models(
            args.backbone, args.variant, preset, size, args.embedding_dim, args.loss
        )
    for model in models.values():
        time_steps(model, images, labels, args.warmup)

    times = {name: [] for name in models}
    for round_index in range(args.rounds):
        for name, model in models.items():
            times[name].append(time_steps(model, images, labels, args.steps))
        print(
            f"round {round_index}: "
            + ", ".join(f"{n} {t[-1] * 1e3:.1f} ms" for n, t in times.items()),
            flush=True,
        )
    medians = {name: statistics.median(t) for name, t in times.items()}
    ratio = medians["keras_hub"] / medians["keras_dml"]
    params = {name: int(model.count_params()) for name, model in models.items()}
    for name, value in medians.items():
        print(f"{name:>10}: {value * 1e3:8.1f} ms/step, {params[name]:,} parameters")
    print(f"ratio keras_hub / keras_dml: {ratio:.3f}")
    ours = (
        f"{args.backbone} {args.variant}".strip() if args.backbone == "resnet50" else args.backbone
    )
    theirs = "ResNet-50" if args.preset is None else f"`{args.preset}`"
    row = {
        "what": f"keras-hub {theirs} vs keras-dml {ours} train step ({size} px, "
        f"batch {args.batch_size})",
        "result": f"{ratio:.2f}x ({medians['keras_hub'] * 1e3:.0f} ms / "
        f"{medians['keras_dml'] * 1e3:.0f} ms per step)",
        "target": "reported",
    }
    measured = {
        "milliseconds_per_step": {name: value * 1e3 for name, value in medians.items()},
        "ratio": ratio,
        "parameters": params,
        "rounds": times,
    }
    write_record(args.record, "speed.hub_backbone_step", argv, measured, [row])
    return ratio


if __name__ == "__main__":
    main()
