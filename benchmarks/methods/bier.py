"""Training-step time of BIER (without / with the adversarial loss) against the plain baseline.

All models share the same backbone architecture, embedding size (512 = 96-160-256 for BIER),
batch and input size, and are measured in one process. Rounds are interleaved (baseline, BIER,
A-BIER, baseline, ...) so that load from other processes affects all models alike; each round
times `steps` calls of `train_on_batch` after warm-up, and the script prints the median per-step
time over rounds and the ratios to the baseline, and writes them to its record (`--record`,
default `benchmarks/results/speed_bier.json`).

Usage:
    python -m benchmarks.methods.bier --image-size 32 --batch-size 64 --rounds 7 --steps 10
"""

import argparse
import statistics
import time

import keras
import numpy as np

from benchmarks.records import add_record_option, write_record


def build_models(image_size, embedding_dim):
    from keras_dml import backbones
    from keras_dml.losses.binomial_deviance import BinomialDevianceLoss
    from keras_dml.models.bier import BIER
    from keras_dml.models.boosting.weights import boosting_group_sizes
    from keras_dml.models.embedding_model import EmbeddingModel

    def backbone():
        keras.utils.set_random_seed(0)
        return backbones.get("convnet", input_shape=(image_size, image_size, 3))

    groups = boosting_group_sizes(embedding_dim, 3)
    baseline = EmbeddingModel(backbone(), embedding_dim=embedding_dim)
    baseline.compile(optimizer=keras.optimizers.Adam(1e-4), loss=BinomialDevianceLoss())
    bier = BIER(backbone(), group_sizes=groups)
    bier.compile(optimizer=keras.optimizers.Adam(1e-4))
    abier = BIER(backbone(), group_sizes=groups, diversity="adversarial")
    abier.compile(optimizer=keras.optimizers.Adam(1e-4))
    return {"baseline": baseline, "bier": bier, "a-bier": abier}


def time_steps(model, images, labels, steps):
    start = time.perf_counter()
    for _ in range(steps):
        logs = model.train_on_batch(images, labels, return_dict=True)
    float(logs["loss"])  # wait for the last step
    return (time.perf_counter() - start) / steps


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--embedding-dim", type=int, default=512)
    parser.add_argument("--m-per-class", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=10)
    add_record_option(parser, "speed_bier.json")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    rng = np.random.default_rng(0)
    size = args.image_size
    images = (rng.random((args.batch_size, size, size, 3)) * 255).astype("float32")
    labels = (np.arange(args.batch_size) // args.m_per_class).astype("int32")
    models = build_models(size, args.embedding_dim)
    for model in models.values():
        for _ in range(args.warmup):
            model.train_on_batch(images, labels)
    times = {name: [] for name in models}
    for _ in range(args.rounds):
        for name, model in models.items():
            times[name].append(time_steps(model, images, labels, args.steps))

    base = statistics.median(times["baseline"])
    print(
        f"convnet backbone, {size}x{size} px, batch {args.batch_size} "
        f"({args.m_per_class} per class), embedding {args.embedding_dim}; "
        f"{args.rounds} interleaved rounds x {args.steps} steps after {args.warmup} warm-up steps"
    )
    print(f"{'model':<10} {'median ms/step':>15} {'min':>8} {'max':>8} {'ratio':>7}")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:<10} {1e3 * median:>15.2f} {1e3 * min(values):>8.2f} "
            f"{1e3 * max(values):>8.2f} {median / base:>7.3f}"
        )
    ratios = {name: statistics.median(values) / base for name, values in times.items()}
    row = {
        "what": f"BIER / A-BIER vs baseline step (convnet {size} px, {args.embedding_dim}-d)",
        "result": f"{ratios['bier']:.3f}x / {ratios['a-bier']:.3f}x",
        "target": "<= 1.10x",
    }
    measured = {"ratios": ratios, "rounds_seconds": times}
    write_record(args.record, "methods.bier", argv, measured, [row])
    return ratios


if __name__ == "__main__":
    main()
