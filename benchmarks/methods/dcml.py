"""Training-step time of DCML against the plain ensemble baseline on the same backbone and batch.

Both models have the same backbone architecture, K learners of `learner_dim` (the baseline is
`EmbeddingModel(learner_dims=(d,) * K)` trained with the margin loss on the concatenation, i.e.
DCML's `J_dis` alone); DCML adds the M compositors, M composites and their subtask losses, and
the self-reinforced loss. Both are measured in one process in interleaved rounds (baseline,
DCML, baseline, ...) so that load from other processes affects both alike; each round times
`steps` calls of `train_on_batch` after warm-up. The script prints the median per-step time over
rounds and the DCML / baseline ratio, both in wall-clock time and in the process's CPU time
(all threads; less sensitive to other processes on a loaded machine), and writes them to its
record (`--record`, default `benchmarks/results/speed_dcml.json`).

Usage:
    python -m benchmarks.methods.dcml --image-size 64 --batch-size 100 --rounds 7 --steps 10
"""

import argparse
import statistics
import time

import keras
import numpy as np

from benchmarks.records import add_record_option, write_record


def build_models(image_size, num_learners, learner_dim, num_compositors, seed=0):
    """The baseline and DCML, compiled with the same optimizer and margin loss."""
    from keras_dml import backbones
    from keras_dml.losses import MarginLoss
    from keras_dml.models.dcml import DCML
    from keras_dml.models.embedding_model import EmbeddingModel

    def backbone():
        keras.utils.set_random_seed(seed)
        return backbones.get("convnet", input_shape=(image_size, image_size, 3))

    baseline = EmbeddingModel(backbone(), learner_dims=(learner_dim,) * num_learners)
    baseline.compile(optimizer=keras.optimizers.Adam(1e-4), loss=MarginLoss(seed=seed))
    dcml = DCML(
        backbone(),
        num_learners=num_learners,
        learner_dim=learner_dim,
        num_compositors=num_compositors,
        loss=MarginLoss(seed=seed),
    )
    dcml.compile(optimizer=keras.optimizers.Adam(1e-4))
    return {"baseline": baseline, "dcml": dcml}


def time_steps(model, images, labels, steps):
    """Mean (wall, CPU) seconds per `train_on_batch` call over `steps` calls."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        logs = model.train_on_batch(images, labels, return_dict=True)
    float(logs["loss"])  # wait for the last step
    return (time.perf_counter() - wall) / steps, (time.process_time() - cpu) / steps


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--m-per-class", type=int, default=2)
    parser.add_argument("--num-learners", type=int, default=4)
    parser.add_argument("--learner-dim", type=int, default=128)
    parser.add_argument("--num-compositors", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=10)
    add_record_option(parser, "speed_dcml.json")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.batch_size % args.m_per_class:
        parser.error("--batch-size must be a multiple of --m-per-class")

    rng = np.random.default_rng(0)
    size = args.image_size
    images = (rng.random((args.batch_size, size, size, 3)) * 255).astype("float32")
    labels = (np.arange(args.batch_size) // args.m_per_class).astype("int32")
    models = build_models(size, args.num_learners, args.learner_dim, args.num_compositors)
    for model in models.values():
        for _ in range(args.warmup):
            model.train_on_batch(images, labels)
    times = {name: [] for name in models}
    for _ in range(args.rounds):
        for name, model in models.items():
            times[name].append(time_steps(model, images, labels, args.steps))
    print(
        f"convnet backbone, {size}x{size} px, batch {args.batch_size} "
        f"({args.m_per_class} per class), K={args.num_learners} x {args.learner_dim}, "
        f"M={args.num_compositors}; {args.rounds} interleaved rounds x {args.steps} steps "
        f"after {args.warmup} warm-up steps"
    )
    for column, clock in enumerate(("wall-clock", "CPU (all threads)")):
        base = statistics.median(t[column] for t in times["baseline"])
        print(f"{clock} time per step")
        print(f"  {'model':<10} {'median ms':>10} {'min':>9} {'max':>9} {'ratio':>7}")
        for name, pairs in times.items():
            values = [t[column] for t in pairs]
            median = statistics.median(values)
            print(
                f"  {name:<10} {1e3 * median:>10.2f} {1e3 * min(values):>9.2f} "
                f"{1e3 * max(values):>9.2f} {median / base:>7.3f}"
            )
    wall, cpu = (
        statistics.median(t[column] for t in times["dcml"])
        / statistics.median(t[column] for t in times["baseline"])
        for column in (0, 1)
    )
    row = {
        "what": f"DCML vs baseline step (convnet {size} px, {args.num_learners} x "
        f"{args.learner_dim}, M={args.num_compositors})",
        "result": f"{wall:.3f}x (CPU time {cpu:.3f}x)",
        "target": "<= 1.10x",
    }
    measured = {"wall_ratio": wall, "cpu_ratio": cpu, "rounds_wall_cpu_seconds": times}
    write_record(args.record, "methods.dcml", argv, measured, [row])
    return wall, cpu


if __name__ == "__main__":
    main()
