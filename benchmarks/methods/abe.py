"""ABE-M vs M-heads vs 1-head: parameters, compute and training-step time (Table 1 columns).

Every model is built on the same backbone and input size and measured in one run:

- parameters: `model.count_params()` (trainable + BatchNorm statistics), plus trainable only;
- MACs per image: an analytic count of the multiply-accumulates of every Conv2D /
  DepthwiseConv2D / SeparableConv2D / Dense layer, taken from the layers' output shapes
  (BatchNorm, activations, pooling and the mask product are not counted; FLOPs ~= 2 x MACs).
  ABE = S + trunk C + M 1x1 attention convolutions + M x (G + embedding layer);
  M-heads = S + M x (G_m + head);
- step time: median wall time of `train_on_batch` (forward, Eq. 8 loss, backward, SGD update)
  after warm-up steps, on random images with 2 images per class.

    python -m benchmarks.methods.abe                       # convnet at 32 and 64 px, M = 2, 4, 8
    python -m benchmarks.methods.abe --googlenet --batch-size 8   # GoogLeNet at 224 px, one step

The run's record (`--record`, default `benchmarks/results/speed_abe.json`) holds every count
and one speed-table row per input size.

Paper reference (Table 1, GoogLeNet 224 px, 512-d): params x10^7 1-head 0.65, 2/4/8-heads
1.18/2.24/4.36, ABE-1/2/4/8 0.97/0.98/1.05/1.20; flops x10^9 1.58, 2.25/3.60/6.28,
2.21/2.96/4.46/7.46.
"""

import argparse
import platform
import statistics
import time

import keras
import numpy as np

from benchmarks.records import add_record_option, write_record
from keras_dml import backbones
from keras_dml.models.abe import ABE
from keras_dml.models.mheads import MHeads


def layer_macs(layer):
    """Multiply-accumulates per image of one layer (0 for layers without a weight product)."""
    if not isinstance(
        layer,
        (
            keras.layers.Conv2D,
            keras.layers.DepthwiseConv2D,
            keras.layers.SeparableConv2D,
            keras.layers.Dense,
        ),
    ):
        return 0
    out_shape = layer.output.shape
    in_channels = int(layer.input.shape[-1])
    positions = int(np.prod(out_shape[1:-1])) if len(out_shape) > 2 else 1
    if isinstance(layer, keras.layers.Dense):
        return positions * in_channels * int(out_shape[-1])
    kernel = int(np.prod(layer.kernel_size))
    if isinstance(layer, keras.layers.DepthwiseConv2D):
        return positions * int(out_shape[-1]) * kernel
    if isinstance(layer, keras.layers.SeparableConv2D):
        depth = positions * in_channels * layer.depth_multiplier * kernel
        return depth + positions * in_channels * layer.depth_multiplier * int(out_shape[-1])
    return positions * int(out_shape[-1]) * kernel * in_channels // layer.groups


def model_macs(model):
    """MACs per image of a functional model: the sum over its layers."""
    return sum(layer_macs(layer) for layer in model.layers)


def macs_per_image(model):
    """Analytic MACs per image of an `ABE` or `MHeads` model (see the module docstring)."""
    spatial = model_macs(model.spatial_extractor)
    if isinstance(model, ABE):
        trunk = model_macs(model.attention_trunk) if model.attention_trunk is not None else 0
        features = model.spatial_extractor.outputs[0].shape
        trunk_out = (model.attention_trunk or model.spatial_extractor).outputs[0].shape
        attention = int(np.prod(trunk_out[1:3])) * int(trunk_out[-1]) * int(features[-1])
        embedding = int(model.global_extractor.outputs[0].shape[-1]) * model.learner_dims[0]
        global_part = model_macs(model.global_extractor) + embedding
        return spatial + trunk + model.num_learners * (attention + global_part)
    total = spatial
    for extractor, dim in zip(model.global_extractors, model.learner_dims):
        total += model_macs(extractor) + int(extractor.outputs[0].shape[-1]) * dim
    return total


def step_time(model, batch_size, size, steps, warmup, seed=0):
    """Median seconds of one `train_on_batch` after `warmup` steps."""
    rng = np.random.default_rng(seed)
    images = (rng.random((batch_size, size, size, 3)) * 255.0).astype("float32")
    labels = (np.arange(batch_size) // 2).astype("int32")
    model.compile(optimizer=keras.optimizers.SGD(1e-3, momentum=0.9))
    for _ in range(warmup):
        model.train_on_batch(images, labels)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        model.train_on_batch(images, labels)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(backbone_name, size, learners, embedding_dim, batch_size, steps, warmup):
    """Rows of (name, params, trainable params, MACs, step seconds) for one input size."""
    configs = [("1-head", MHeads, 1)]
    configs += [(f"{m}-heads", MHeads, m) for m in learners]
    configs += [("ABE-1", ABE, 1)] + [(f"ABE-{m}", ABE, m) for m in learners]
    rows = []
    for name, cls, m in configs:
        keras.utils.set_random_seed(0)
        backbone = backbones.get(backbone_name, input_shape=(size, size, 3))
        model = cls(backbone, num_learners=m, embedding_dim=embedding_dim)
        trainable = sum(int(np.prod(w.shape)) for w in model.trainable_weights)
        seconds = step_time(model, batch_size, size, steps, warmup)
        rows.append((name, model.count_params(), trainable, macs_per_image(model), seconds))
        print(
            f"  {name:9s} params {rows[-1][1] / 1e6:8.3f} M  trainable {trainable / 1e6:8.3f} M"
            f"  MACs/image {rows[-1][3] / 1e6:9.2f} M  step {seconds * 1000:9.1f} ms",
            flush=True,
        )
    return rows


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backbone", default="convnet")
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--learners", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--embedding-dim", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument(
        "--googlenet",
        action="store_true",
        help="GoogLeNet at 224 px with one timed step (overrides backbone, sizes and steps)",
    )
    add_record_option(parser, "speed_abe.json")
    return parser


def size_row(args, size, rows):
    """The speed-table row of one input size: every model's parameters, MACs and step time."""
    counts = "; ".join(
        f"{name} {params / 1e7:.2f} x 10^7 / {macs / 1e9:.2f} x 10^9 / {1e3 * seconds:.0f} ms"
        for name, params, _, macs, seconds in rows
    )
    return {
        "what": f"ABE-M and M-heads: parameters / MACs per image / step time ({args.backbone} "
        f"{size} px, {args.embedding_dim}-d, batch {args.batch_size})",
        "result": counts,
        "target": "reported (the paper's Table 1 at GoogLeNet 224 px: see the script)",
    }


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.googlenet:
        args.backbone, args.sizes, args.steps, args.warmup = "googlenet", [224], 1, 1
    print(
        f"ABE benchmark: backbone={args.backbone} embedding={args.embedding_dim} "
        f"batch={args.batch_size} steps={args.steps} (warm-up {args.warmup}); "
        f"{platform.processor() or platform.machine()}, keras {keras.__version__}"
    )
    results = {}
    for size in args.sizes:
        print(f"input {size}x{size}:")
        results[size] = measure(
            args.backbone,
            size,
            args.learners,
            args.embedding_dim,
            args.batch_size,
            args.steps,
            args.warmup,
        )
        base = results[size][0]
        print("  ratios to 1-head (params, MACs, step time):")
        for name, params, _, macs, seconds in results[size][1:]:
            print(
                f"    {name:9s} x{params / base[1]:5.2f}  x{macs / base[3]:5.2f}"
                f"  x{seconds / base[4]:5.2f}"
            )
    measured = {
        str(size): [
            {"model": n, "params": p, "trainable": t, "macs": m, "step_seconds": s}
            for n, p, t, m, s in rows
        ]
        for size, rows in results.items()
    }
    table = [size_row(args, size, rows) for size, rows in results.items()]
    write_record(args.record, "methods.abe", argv, measured, table)
    return results


if __name__ == "__main__":
    main()
