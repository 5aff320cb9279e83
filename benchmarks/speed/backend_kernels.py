"""Where a backend's CPU training time goes: the backbone's kernels timed alone on each backend.

Why does keras-dml train slower on JAX than on TensorFlow on this CPU
(`benchmarks/speed/backend_speed.py`)? A training step of `vgg_small` is almost all 3x3 convolutions
(forward, gradient with respect to the input, gradient with respect to the filter) and 2x2
max-pooling; this script times exactly those operations with each backend's own library, with no
Keras and no keras-dml in the way, at the shape of the backbone's largest layer at the accuracy
benchmark's budget (a batch of 128 images of 32 x 32 x 64 channels, 64 filters). A square float32
matrix product is the dense-BLAS reference. If the kernels alone differ between backends by as
much as the training steps do, the gap is the backend's kernels, not keras-dml's code.

Each backend runs in its own worker process (TensorFlow in a `tf.function`, JAX under `jax.jit`,
PyTorch eagerly in its native NCHW layout), the backends taking turns for `--rounds` rounds;
each figure is the median over rounds of the median of `--repeats` calls after warm-up. The
`jax+onednn` variant is JAX with `XLA_FLAGS=--xla_cpu_use_onednn=true` (as in `backend_speed`).

Usage:
    python -m benchmarks.speed.backend_kernels
    python -m benchmarks.speed.backend_kernels --backends tensorflow jax --batch 16 --repeats 3
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

from benchmarks.records import add_record_option, write_record
from benchmarks.speed.backend_speed import VARIANTS, backend_versions, run_in_backend

BACKENDS = ("tensorflow", "jax", "torch")
KERNELS = (
    "conv forward",
    "conv gradient (input)",
    "conv gradient (filter)",
    "max-pool forward + gradient",
    "matmul",
)
RESULT_PREFIX = "BACKEND-KERNELS "


def build_parser():
    """The command-line options (the docs' commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backends", nargs="+", default=list(BACKENDS), choices=(*BACKENDS, *VARIANTS)
    )
    parser.add_argument("--batch", type=int, default=128, help="images per batch (default 128)")
    parser.add_argument("--size", type=int, default=32, help="feature map side (default 32)")
    parser.add_argument("--channels", type=int, default=64, help="in and out channels")
    parser.add_argument("--matmul", type=int, default=2048, help="side of the square matmul")
    parser.add_argument("--repeats", type=int, default=10, help="timed calls per kernel")
    parser.add_argument("--rounds", type=int, default=2, help="turns of every backend")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    add_record_option(parser, "backend_kernels.json")
    return parser


def inputs(args):
    """Seeded float32 NHWC activations, HWIO filters, output gradients and matmul operands."""
    rng = np.random.default_rng(0)
    shape = (args.batch, args.size, args.size, args.channels)
    return {
        "x": rng.standard_normal(shape, dtype=np.float32),
        "w": rng.standard_normal((3, 3, args.channels, args.channels), dtype=np.float32) / 24,
        "dy": rng.standard_normal(shape, dtype=np.float32),
        "a": rng.standard_normal((args.matmul, args.matmul), dtype=np.float32),
    }


def tensorflow_kernels(data):
    """`{kernel: zero-argument callable returning a result}` on TensorFlow (graph functions)."""
    import tensorflow as tf

    x, w, dy, a = (tf.constant(data[k]) for k in ("x", "w", "dy", "a"))

    def conv(x, w):
        return tf.nn.conv2d(x, w, 1, "SAME")

    def gradient(wrt):
        @tf.function
        def run():
            watched = {"input": x, "filter": w}[wrt]
            with tf.GradientTape() as tape:
                tape.watch(watched)
                y = tf.reduce_sum(conv(x, w) * dy)
            return tape.gradient(y, watched)

        return run

    @tf.function
    def pool():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.nn.max_pool2d(x, 2, 2, "VALID"))
        return tape.gradient(y, x)

    return {
        "conv forward": tf.function(lambda: conv(x, w)),
        "conv gradient (input)": gradient("input"),
        "conv gradient (filter)": gradient("filter"),
        "max-pool forward + gradient": pool,
        "matmul": tf.function(lambda: tf.matmul(a, a)),
    }, lambda result: result.numpy()


def jax_kernels(data):
    """The same kernels under `jax.jit` (XLA:CPU)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    x, w, dy, a = (jnp.asarray(data[k]) for k in ("x", "w", "dy", "a"))

    def conv(x, w):
        return lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )

    def pooled_sum(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID").sum()

    def objective(x, w):
        return jnp.sum(conv(x, w) * dy)

    calls = {
        "conv forward": (jax.jit(conv), (x, w)),
        "conv gradient (input)": (jax.jit(jax.grad(objective, argnums=0)), (x, w)),
        "conv gradient (filter)": (jax.jit(jax.grad(objective, argnums=1)), (x, w)),
        "max-pool forward + gradient": (jax.jit(jax.grad(pooled_sum)), (x,)),
        "matmul": (jax.jit(jnp.matmul), (a, a)),
    }
    return {name: (lambda f=f, args=args: f(*args)) for name, (f, args) in calls.items()}, (
        jax.block_until_ready
    )


def torch_kernels(data):
    """The same kernels in PyTorch's eager mode, NCHW (its native convolution layout)."""
    import torch

    def nchw(array):
        return torch.from_numpy(np.ascontiguousarray(array.transpose(0, 3, 1, 2)))

    x, dy = nchw(data["x"]), nchw(data["dy"])
    w = torch.from_numpy(np.ascontiguousarray(data["w"].transpose(3, 2, 0, 1)))
    a = torch.from_numpy(data["a"])
    conv = torch.nn.functional.conv2d

    def gradient(wrt):
        def run():
            xg, wg = (
                x.detach().requires_grad_(wrt == "input"),
                w.detach().requires_grad_(wrt == "filter"),
            )
            (conv(xg, wg, padding=1) * dy).sum().backward()
            return (xg if wrt == "input" else wg).grad

        return run

    def pool():
        xg = x.detach().requires_grad_(True)
        torch.nn.functional.max_pool2d(xg, 2).sum().backward()
        return xg.grad

    @torch.no_grad()
    def forward():
        return conv(x, w, padding=1)

    @torch.no_grad()
    def matmul():
        return a @ a

    return {
        "conv forward": forward,
        "conv gradient (input)": gradient("input"),
        "conv gradient (filter)": gradient("filter"),
        "max-pool forward + gradient": pool,
        "matmul": matmul,
    }, lambda result: result.numpy()


def run_worker(args):
    """Times every kernel on this process's backend; prints `{kernel: milliseconds}` as JSON."""
    backend = VARIANTS.get(args.worker, (args.worker,))[0]
    build = {"tensorflow": tensorflow_kernels, "jax": jax_kernels, "torch": torch_kernels}[backend]
    kernels, wait = build(inputs(args))
    times = {}
    for name in KERNELS:
        call = kernels[name]
        for _ in range(2):  # tracing, compilation, first-touch allocation
            wait(call())
        samples = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            wait(call())
            samples.append(time.perf_counter() - start)
        times[name] = 1000 * statistics.median(samples)
    result = {"milliseconds": times, "versions": backend_versions(backend)}
    result["xla_flags"] = os.environ.get("XLA_FLAGS", "")
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def run_one(args, backend):
    """Runs the worker of `backend` in a fresh interpreter; returns its result dict."""
    command = [sys.executable, "-m", "benchmarks.speed.backend_kernels", "--worker", backend]
    for option in ("batch", "size", "channels", "matmul", "repeats"):
        command += [f"--{option}", str(getattr(args, option))]
    return run_in_backend(command, backend, RESULT_PREFIX, backend)


def summarize(rounds):
    """`{backend: {"milliseconds": median over rounds per kernel, "versions", "xla_flags"}}`."""
    summary = {}
    for backend, results in rounds.items():
        summary[backend] = {
            "milliseconds": {
                name: statistics.median(r["milliseconds"][name] for r in results)
                for name in KERNELS
            },
            "rounds": [r["milliseconds"] for r in results],
            "versions": results[-1]["versions"],
            "xla_flags": results[-1]["xla_flags"],
        }
    return summary


def ratio_rows(summary):
    """Speed-table style rows: each backend's time per kernel against TensorFlow's."""
    rows = []
    if "tensorflow" not in summary:
        return rows
    reference = summary["tensorflow"]["milliseconds"]
    for backend, entry in summary.items():
        if backend == "tensorflow":
            continue
        for name in KERNELS:
            ratio = entry["milliseconds"][name] / reference[name]
            rows.append(
                {"what": f"{name}: {backend} time / TensorFlow time", "result": f"{ratio:.2f}x"}
            )
    return rows


def print_table(summary):
    backends = list(summary)
    print(f"{'kernel (ms)':<30}" + "".join(f"{b:>14}" for b in backends))
    for name in KERNELS:
        print(
            f"{name:<30}" + "".join(f"{summary[b]['milliseconds'][name]:14.1f}" for b in backends)
        )


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.worker:
        run_worker(args)
        return None
    rounds = {backend: [] for backend in args.backends}
    for round_index in range(args.rounds):
        for backend in args.backends:
            print(f"[backend_kernels] round {round_index + 1} on {backend}", flush=True)
            rounds[backend].append(run_one(args, backend))
    summary = summarize(rounds)
    shape = {k: getattr(args, k) for k in ("batch", "size", "channels", "matmul", "repeats")}
    write_record(
        args.record, "speed.backend_kernels", argv, summary, ratio_rows(summary), shape=shape
    )
    print_table(summary)
    return summary


if __name__ == "__main__":
    main()
