"""Training speed of every method on TensorFlow, JAX and PyTorch, side by side in one run.

Images per second of a training epoch for the baseline and each ensemble method at the
accuracy benchmark's budget (`benchmarks/accuracy/rows.py`: `BUDGET`, the `<method>/paper` rows
and `baseline/margin`), on each Keras backend of this machine.

Keras reads `KERAS_BACKEND` once, at import, so every (backend, row) pair trains in its own worker
process: `keras_dml.training.train` for 2 epochs, timed by a callback. Each worker reports

- `first_epoch`: images/s of epoch 1 from its start, so tracing and compilation (JAX's XLA,
  TensorFlow's graph) are in it;
- `steady`: images/s between the first and the last training step of epoch 2, the figure the
  backends are compared on;
- `epoch2`: images/s of epoch 2 from the last step of epoch 1, so the work between epochs (the
  division passes of D&C and hierarchical D&C) is in it;
- `pipeline`: images/s of one epoch of the training batches alone (sampler, decoding, augmentation;
  no model), which tells a slow input pipeline from a slow training step.

The backends take turns within each row (TensorFlow, JAX, PyTorch for the first row, then the
next), so load from other processes falls on all of them alike. The table gives each backend's
`steady` figure and its ratio to TensorFlow's (target: JAX's time per image at most 1.2x
TensorFlow's, i.e. `jax/tf` >= 0.83).

`--dataset synthetic` trains on random images held in memory (`--steps` batches an epoch, every
class `m_per_class` images), so only the training step and the batch assembly are timed: what
`benchmarks/speed/gpu_speed.py` compares with PyTorch at 224 px, where no dataset is at hand.

Usage:
    python -m benchmarks.speed.backend_speed                                   # hangul, every row
    python -m benchmarks.speed.backend_speed --dataset digits --classes 10 --rows baseline/margin
    python -m benchmarks.speed.backend_speed --dataset synthetic --steps 20 \
        --backends jax jax+onednn
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

from benchmarks.accuracy.rows import BUDGET, METHODS, keras_config
from benchmarks.records import add_record_option, command_line, write_record

BACKENDS = ("tensorflow", "jax", "torch")
# Variants run on a Keras backend with extra XLA flags: `jax+onednn` is JAX with XLA:CPU's oneDNN
# kernels for convolutions and matrix products (`--xla_cpu_use_onednn`, an experimental XLA flag)
# instead of its own, which is where TensorFlow's CPU speed comes from.
VARIANTS = {"jax+onednn": ("jax", "--xla_cpu_use_onednn=true")}
ROWS = ("baseline/margin", *(f"{method}/paper" for method in METHODS))
RESULT_PREFIX = "BACKEND-SPEED "


def build_parser():
    """The command-line options (the docs' commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="hangul", help="registered dataset (default hangul)")
    parser.add_argument("--rows", nargs="+", default=list(ROWS), help="accuracy benchmark rows")
    parser.add_argument(
        "--backends", nargs="+", default=list(BACKENDS), choices=(*BACKENDS, *VARIANTS)
    )
    parser.add_argument(
        "--classes",
        type=int,
        default=None,
        help="keep the first N classes of each split (shorter epochs and evaluation; default: all)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a budget entry, e.g. --set batch_size=32 (as benchmarks/accuracy/run.py)",
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=16,
        help="batches an epoch with --dataset synthetic (default 16)",
    )
    parser.add_argument(
        "--precision",
        default="float32",
        choices=("float32", "mixed_float16", "mixed_bfloat16"),
        help="the run's dtype policy (default float32)",
    )
    parser.add_argument("--output", default="runs/backend_speed", help="folder of the runs")
    parser.add_argument(
        "--keep-rows",
        action="store_true",
        help="keep the rows of the existing record that this run does not measure (same "
        "dataset, classes, precision, budget and backends); e.g. to measure one row again",
    )
    parser.add_argument("--worker", nargs=2, metavar=("BACKEND", "ROW"), help=argparse.SUPPRESS)
    add_record_option(parser, "backend_speed.json")
    return parser


def budget_of(overrides):
    budget = dict(BUDGET)
    for item in overrides:
        key, _, value = item.partition("=")
        if key not in BUDGET:
            raise SystemExit(f"--set {item}: unknown budget entry; choose from {sorted(BUDGET)}")
        budget[key] = type(BUDGET[key])(value)
    return budget


def run_worker(args):
    """Trains one row on this process's backend and prints its timings as one JSON line."""
    import keras

    from keras_dml.data.batch_streams import iterate_batches
    from keras_dml.data.samplers import MPerClassSampler
    from keras_dml.methods.defaults import sampled_batches
    from keras_dml.training import RunConfig, load_splits, resolve_run, train

    backend, row = args.worker
    keras_backend = VARIANTS.get(backend, (backend,))[0]
    assert keras.backend.backend() == keras_backend, (keras.backend.backend(), backend)
    budget = budget_of(args.set)
    dataset = "digits" if args.dataset == "synthetic" else args.dataset  # a registered name
    config = keras_config(row, dataset, budget, "margin", seed=0)
    config.update(epochs=2, eval_every=2, precision=args.precision)
    if args.dataset == "synthetic":
        splits = synthetic_splits(budget, args.steps)
    else:
        splits = load_splits(RunConfig.from_dict(config))
    resolved = resolve_run(config, splits).to_dict()
    if args.classes:  # every split cut to its first N classes: the end-of-run evaluation too
        splits = {name: _first_classes(split, args.classes) for name, split in splits.items()}

    sampler = MPerClassSampler(
        splits["train"].labels, resolved["m_per_class"], resolved["batch_size"], seed=0
    )
    start, images = time.perf_counter(), 0
    for batch in iterate_batches(sampled_batches(resolved, splits["train"], sampler)):
        images += len(batch[1])
    pipeline = images / (time.perf_counter() - start)

    timer = epoch_timer(keras.callbacks.Callback)
    folder = os.path.join(args.output, backend, row.replace("/", "_"))
    # A fresh run: `train` resumes a folder that holds an earlier run's state, which would time
    # the epochs left over from it instead of two.
    shutil.rmtree(folder, ignore_errors=True)
    run = train(config, folder, verbose=0, extra_callbacks=[timer], splits=splits, report=False)
    del run  # the timings are the callback's
    result = {"row": row, "pipeline": pipeline, **timer.rates(resolved["batch_size"])}
    result["versions"] = backend_versions(keras_backend)
    result["xla_flags"] = os.environ.get("XLA_FLAGS", "")
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    result["load_average"] = round(os.getloadavg()[0], 1)
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def backend_versions(backend):
    """Keras, the backend's library and the device it trains on."""
    import importlib

    import keras

    module = importlib.import_module(backend)
    versions = {"keras": keras.__version__, backend: module.__version__}
    if backend == "jax":
        versions["device"] = str(module.devices()[0].device_kind)
    elif backend == "torch":
        versions["device"] = module.cuda.get_device_name() if module.cuda.is_available() else "cpu"
    else:
        gpus = module.config.list_physical_devices("GPU")
        versions["device"] = gpus[0].name if gpus else "cpu"
    return versions


def synthetic_splits(budget, steps, seed=0):
    """Random uint8 images in memory: `steps` full batches of `m_per_class` images per class for
    training, and two batches each for validation and test (their own classes)."""
    import numpy as np

    from keras_dml.data import ImageDataset

    rng = np.random.default_rng(seed)
    size, batch, m = budget["image_size"], budget["batch_size"], budget["m_per_class"]

    def split(num_images, first_class):
        labels = first_class + np.arange(num_images) // m
        images = rng.integers(0, 256, (num_images, size, size, 3), dtype=np.uint8)
        return ImageDataset(labels - first_class, images=images, image_size=size)

    train = split(steps * batch, 0)
    return {"train": train, "val": split(2 * batch, 0), "test": split(2 * batch, 0)}


def _first_classes(data, count):
    import numpy as np

    kept = sorted(set(data.labels.tolist()))[:count]
    return data.subset(np.flatnonzero(np.isin(data.labels, kept)))


def epoch_timer(base):
    """A callback timing each epoch's steps (`base`: `keras.callbacks.Callback`, imported late)."""

    class Timer(base):
        def __init__(self):
            super().__init__()
            self.epochs = []

        def on_epoch_begin(self, epoch, logs=None):
            self.epochs.append({"begin": time.perf_counter(), "steps": []})

        def on_train_batch_end(self, batch, logs=None):
            self.epochs[-1]["steps"].append(time.perf_counter())

        def rates(self, batch_size):
            """images/s: `first_epoch`, `steady` (epoch 2's steps) and `epoch2`."""
            first, second = self.epochs[0], self.epochs[1]
            steps = second["steps"]
            return {
                "batch_size": batch_size,
                "steps_per_epoch": len(steps),
                "first_epoch": len(first["steps"])
                * batch_size
                / (first["steps"][-1] - first["begin"]),
                "steady": (len(steps) - 1) * batch_size / (steps[-1] - steps[0]),
                "epoch2": len(steps) * batch_size / (steps[-1] - first["steps"][-1]),
            }

    return Timer()


def run_one(args, backend, row):
    """Runs the worker of (backend, row) in a fresh interpreter; returns its result dict."""
    command = [sys.executable, "-m", "benchmarks.speed.backend_speed", "--worker", backend, row]
    command += ["--dataset", args.dataset, "--output", args.output, "--steps", str(args.steps)]
    command += ["--precision", args.precision]
    command += [f"--set={item}" for item in args.set]
    if args.classes:
        command += ["--classes", str(args.classes)]
    return run_in_backend(command, backend, RESULT_PREFIX, f"{backend} {row}")


def run_in_backend(command, backend, prefix, label):
    """Runs a worker `command` on `backend` (a Keras backend or a `VARIANTS` name) in a fresh
    interpreter; returns the JSON of its last output line starting with `prefix`."""
    keras_backend, flags = VARIANTS.get(backend, (backend, ""))
    env = dict(os.environ, KERAS_BACKEND=keras_backend, TF_CPP_MIN_LOG_LEVEL="2")
    if flags:
        env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {flags}".strip()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith(prefix)]
    if result.returncode != 0 or not lines:
        tail = " | ".join(result.stderr.strip().splitlines()[-3:])
        raise SystemExit(f"{label} failed (exit {result.returncode}): {tail}")
    return json.loads(lines[-1][len(prefix) :])


def print_table(results, backends):
    head = f"{'row':<18}" + "".join(f"{b + ' img/s':>17}" for b in backends)
    others = [b for b in backends if b != "tensorflow"]
    if "tensorflow" in backends:
        head += "".join(f"{b + '/tf':>10}" for b in others)
    head += "".join(f"{b[:5] + ' pipe':>12}" for b in backends)
    print(head)
    for row, by_backend in results.items():
        line = f"{row:<18}" + "".join(f"{by_backend[b]['steady']:17.1f}" for b in backends)
        if "tensorflow" in backends:
            tf_rate = by_backend["tensorflow"]["steady"]
            line += "".join(f"{by_backend[b]['steady'] / tf_rate:10.2f}" for b in others)
        line += "".join(f"{by_backend[b]['pipeline']:12.0f}" for b in backends)
        print(line)


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.worker:
        run_worker(args)
        return
    results, commands = kept_rows(args) if args.keep_rows else ({}, [])
    commands = [*commands, command_line("speed.backend_speed", argv)]
    for row in args.rows:
        by_backend = {}
        for backend in args.backends:
            print(f"[backend_speed] {row} on {backend}", flush=True)
            by_backend[backend] = run_one(args, backend, row)
        results[row] = by_backend
        # The record is rewritten after each row, so a run stopped early keeps its rows.
        write_backend_record(args, argv, results, commands)
    print_table(results, args.backends)


def kept_rows(args):
    """`(measured rows, commands)` of the existing record, which must match this run's settings."""
    if not os.path.exists(args.record):
        return {}, []
    with open(args.record) as file:
        record = json.load(file)
    settings = {
        "dataset": args.dataset,
        "classes": args.classes,
        "precision": args.precision,
        "budget": budget_of(args.set),
    }
    for key, value in settings.items():
        if record.get(key) != value:
            raise SystemExit(
                f"--keep-rows: the record {args.record} has {key}={record.get(key)!r}, this run "
                f"{value!r}; run with the record's settings or drop --keep-rows"
            )
    measured = record.get("measured", {})
    for row, by_backend in measured.items():
        if sorted(by_backend) != sorted(args.backends):
            raise SystemExit(
                f"--keep-rows: the record's row {row} has the backends {sorted(by_backend)}, "
                f"this run {sorted(args.backends)}; pass the same --backends or drop --keep-rows"
            )
    return measured, record.get("commands", [record.get("command")])


def write_backend_record(args, argv, results, commands=None):
    """Writes the record of the rows measured so far, with each backend against TensorFlow.

    `commands`: every command whose rows the record holds (`--keep-rows` keeps earlier ones).
    """
    results = {row: results[row] for row in sorted(results, key=_row_order)}
    rows = []
    if "tensorflow" in args.backends:
        for row, by_backend in results.items():
            for backend in args.backends:
                if backend == "tensorflow":
                    continue
                ratio = by_backend[backend]["steady"] / by_backend["tensorflow"]["steady"]
                rows.append(
                    {
                        "what": f"training images/s, {backend} / TensorFlow, {row}",
                        "result": f"{ratio:.2f}x",
                        "target": ">= 0.83x (JAX at most 1.2x TensorFlow's time per image)"
                        if backend.startswith("jax")
                        else "reported",
                    }
                )
    write_record(
        args.record,
        "speed.backend_speed",
        argv,
        results,
        rows,
        dataset=args.dataset,
        classes=args.classes,
        precision=args.precision,
        budget=budget_of(args.set),
        commands=commands or [command_line("speed.backend_speed", argv)],
    )


def _row_order(row):
    """The rows in `ROWS` order, others after them by name."""
    return (ROWS.index(row), "") if row in ROWS else (len(ROWS), row)


if __name__ == "__main__":
    main()
