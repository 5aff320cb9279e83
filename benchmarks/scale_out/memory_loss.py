"""Cross-batch memory at 4k / 16k / 60k slots against the plain loss: step time and peak memory,
side by side in one run, on each Keras backend asked for.

Model: `EmbeddingModel` on the `convnet` backbone (32 x 32 px), 128-d embeddings, Adam, batches
of `--batch-size` random images (4 per class), the contrastive loss plain and wrapped in a
`CrossBatchMemory` of each size. Step times: one process per backend trains every configuration,
a step of each in turn (`--warmup` rounds, then `--steps` timed ones), so all see the same load.
Peak memory: each configuration again in a fresh process of its own (`KERAS_BACKEND` set).

Measured per configuration: median step time, its ratio to the plain loss's, the process's peak
resident memory over the plain loss's, and the documented bound
(`keras_dml.losses.cross_batch_memory.memory_loss_bound`: the `[B, M]` block, the slots and the
loss's own compiled step).

Run:
    python -m benchmarks.scale_out.memory_loss
    python -m benchmarks.scale_out.memory_loss --sizes 512 --steps 2 --backends tensorflow  # quick
"""

import argparse
import json
import os
import subprocess
import sys

from benchmarks.records import RESULTS, write_record
from benchmarks.scale_out.milvus_search import machine_line

EMBEDDING_DIM = 128

# Each process trains one model per memory size in its argv (0: the plain loss), one step each
# in turn, so that every configuration's steps see the same load; `--steps` timed rounds follow
# `--warmup` ones. With one size per process, its peak resident memory is that model's own.
RUN = """
import json, resource, statistics, sys, time
import numpy as np
import keras
from keras_dml import backbones, losses
from keras_dml.losses.cross_batch_memory.footprint import memory_loss_bound
from keras_dml.models import EmbeddingModel

batch_size, warmup, steps, dim, *sizes = (int(v) for v in sys.argv[1:])
rng = np.random.default_rng(0)
images = rng.integers(0, 256, (batch_size, 32, 32, 3)).astype("float32")
labels = np.repeat(np.arange(batch_size // 4), 4).astype("int32")
models = {}
for size in sizes:
    keras.utils.set_random_seed(0)
    model = EmbeddingModel(backbones.get("convnet", input_shape=(32, 32, 3)), embedding_dim=dim)
    loss = {"name": "contrastive"}
    if size:
        loss = {"name": "cross_batch_memory", "loss": loss, "memory_size": size}
    loss = losses.with_class_arguments(loss, embedding_dim=dim)
    model.compile(optimizer="adam", loss=losses.get(loss))
    models[size] = model
times = {size: [] for size in sizes}
for step in range(warmup + steps):
    for size, model in models.items():
        start = time.perf_counter()
        model.train_on_batch(images, labels)
        times[size].append(time.perf_counter() - start)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print("RESULT", json.dumps({
    "step_seconds": {size: statistics.median(times[size][warmup:]) for size in sizes},
    "peak_bytes": peak,
    "bound_bytes": {size: memory_loss_bound(batch_size, size, dim) for size in sizes},
}))
"""


def build_parser():
    """The command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="4000,16000,60000", help="memory sizes, comma-separated")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--backends", default="tensorflow,jax")
    parser.add_argument(
        "--record",
        default=os.path.join(RESULTS, "scale_out_memory_loss.json"),
        help="JSON record (default benchmarks/results/scale_out_memory_loss.json)",
    )
    return parser


def run(backend, sizes, args, steps):
    """`RUN` in a fresh process on `backend`: its JSON result (keys are the sizes, as strings)."""
    argv = [args.batch_size, args.warmup, steps, EMBEDDING_DIM, *sizes]
    result = subprocess.run(
        [sys.executable, "-c", RUN, *map(str, argv)],
        capture_output=True,
        text=True,
        env={**os.environ, "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    if result.returncode != 0 or not lines:
        raise RuntimeError(f"{backend}, memory sizes {sizes}: {result.stderr[-2000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def main(argv=None):
    """Trains each configuration on each backend; prints and records the comparison."""
    args = build_parser().parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    measured = {"batch_size": args.batch_size, "embedding_dim": EMBEDDING_DIM, "backends": {}}
    for backend in args.backends.split(","):
        timed = run(backend, [0, *sizes], args, args.steps)
        peaks = {size: run(backend, [size], args, 1)["peak_bytes"] for size in [0, *sizes]}
        plain_seconds = timed["step_seconds"]["0"]
        rows = {"plain": {"step_seconds": plain_seconds, "peak_bytes": peaks[0]}}
        for size in sizes:
            seconds = timed["step_seconds"][str(size)]
            extra = max(0, peaks[size] - peaks[0])
            bound = timed["bound_bytes"][str(size)]
            rows[str(size)] = {
                "step_seconds": seconds,
                "time_vs_plain": round(seconds / plain_seconds, 2),
                "peak_bytes": peaks[size],
                "extra_bytes": extra,
                "bound_bytes": bound,
                "within_bound": extra <= bound,
            }
            print(summary_row(backend, size, rows[str(size)]), flush=True)
        measured["backends"][backend] = rows
    record = write_record(args.record, "scale_out.memory_loss", argv, measured)
    print("\n".join(summary_lines(record)))
    return record


def summary_row(backend, size, row):
    return (
        f"{backend}: memory {size:,} x {EMBEDDING_DIM}: {row['step_seconds'] * 1000:,.0f} ms/step "
        f"({row['time_vs_plain']:.2f}x the plain loss), +{row['extra_bytes'] / 2**20:,.0f} MiB "
        f"peak (bound {row['bound_bytes'] / 2**20:,.0f} MiB)"
    )


def summary_lines(record):
    """The lines the run prints at its end (the docs quote them)."""
    m = record["measured"]
    lines = [f"batch {m['batch_size']}, {m['embedding_dim']}-d, contrastive loss"]
    for backend, rows in m["backends"].items():
        plain = rows["plain"]
        lines.append(f"{backend}: plain loss: {plain['step_seconds'] * 1000:,.0f} ms/step")
        lines += [
            summary_row(backend, int(size), row) for size, row in rows.items() if size != "plain"
        ]
    return lines + [machine_line(record)]


if __name__ == "__main__":
    main()
