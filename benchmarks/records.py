"""The JSON record a benchmark script writes: what ran, on which machine, and what it measured.

Every script whose numbers the documentation quotes writes one record (`--record PATH`, default
`benchmarks/results/speed_<script>.json`, or `recipes_<dataset>.json` for `recipes.py`), and the
site's tables are built from those files (`docs/hooks.py`), never typed by hand. A record holds:

- `script` and `command`: the script and the command line that produced it;
- `date` and `machine`: CPU model, cores, memory, GPUs, TensorFlow / Keras versions and the
  load average;
- `measured`: the raw values the script measured (seconds, ratios, bytes);
- `rows` (speed scripts): the speed table's rows, `{"what", "result", "target"}`, formatted from
  `measured` by the script itself.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_record_option(parser, "speed_example.json")
    >>> parser.parse_args([]).record.endswith("results/speed_example.json")
    True
"""

import json
import os
import platform
import shlex
import sys
import time

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def add_record_option(parser, default_name):
    """Adds `--record PATH` (default `benchmarks/results/<default_name>`) to `parser`."""
    default = os.path.join(RESULTS, default_name)
    parser.add_argument(
        "--record",
        default=default,
        help=f"JSON record of the run (default benchmarks/results/{default_name})",
    )


def cpu_model():
    """The CPU's model name (`/proc/cpuinfo` on Linux, else `platform.processor()`): the same
    seed and settings gave other weights on another machine, whose kernels round differently."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine():
    """The machine a measurement ran on: CPU, cores, memory, GPUs, library versions, load."""
    description = {
        "platform": f"{platform.system()} {platform.machine()}",
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "load_average": [round(x, 1) for x in os.getloadavg()],
        "python": platform.python_version(),
    }
    try:
        description["memory_gib"] = round(
            os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1
        )
    except (ValueError, OSError, AttributeError):  # not every platform names these
        description["memory_gib"] = None
    for name in ("tensorflow", "keras", "jax", "torch"):
        module = sys.modules.get(name)
        if module is not None:
            description[name] = getattr(module, "__version__", "unknown")
    tensorflow = sys.modules.get("tensorflow")
    if tensorflow is not None:
        gpus = tensorflow.config.list_physical_devices("GPU")
        description["gpus"] = [gpu.name for gpu in gpus]
    return description


def command_line(script, argv):
    """`python -m benchmarks.<script> ARGS`: the command that reproduces a run."""
    words = sys.argv[1:] if argv is None else list(argv)
    return " ".join(["python", "-m", f"benchmarks.{script}", *map(shlex.quote, map(str, words))])


def write_record(path, script, argv, measured, rows=None, **fields):
    """Writes a run's record to `path` (its folder created); returns the record.

    Args:
        path: str. The JSON file, replaced if it exists.
        script: str. The script's module under `benchmarks`, e.g. `"speed.train_step"`.
        argv: list of str or `None`. The script's arguments (`None`: `sys.argv[1:]`).
        measured: dict or `None`. The raw measured values (`None`: the rows are all of them).
        rows: list of dict or `None`. Speed-table rows `{"what", "result", "target"}`.
        **fields: further top-level entries (e.g. `dataset`).

    Returns:
        dict: the record written.
    """
    record = {
        "script": f"benchmarks/{script.replace('.', '/')}.py",
        "command": command_line(script, argv),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        **fields,
    }
    if measured is not None:
        record["measured"] = measured
    if rows is not None:
        record["rows"] = rows
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as file:
        json.dump(record, file, indent=2)
        file.write("\n")
    print(f"wrote {path}", flush=True)
    return record
