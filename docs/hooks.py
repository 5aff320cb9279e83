"""MkDocs hooks: the site's tables come from the records, never typed into a page.

A page asks for a table with a marker line, replaced when the site is built:

- `<!-- table: accuracy -->`: the mean over seeds of every row of
  `benchmarks/results/accuracy_hangul.jsonl` (`benchmarks/accuracy/table.py` reads them);
- `<!-- table: accuracy-differences -->`: each row against the baseline trained with the same loss;
- `<!-- table: accuracy-records NAME -->`: both tables for another records file,
  `benchmarks/results/NAME.jsonl` (the pretrained regime's second backbone, `accuracy_kanji`);
- `<!-- table: reality-check -->`: every loss family's baseline next to PML's implementation,
  with cross-batch memory on and off, and re-ranking of the best row
  (`benchmarks/accuracy/reality_check_table.py`);
- `<!-- table: runtime-pairs -->`: rows trained again on a second runtime
  (`benchmarks/results/runtime_pairs_hangul.jsonl`) next to their reality-check records
  (`benchmarks/accuracy/runtime_pairs.py`);
- `<!-- table: recipes fashion_mnist -->`: `benchmarks/results/recipes_fashion_mnist.json`
  (`benchmarks/accuracy/recipes.py`'s `summary.json`);
- `<!-- table: backend-speed -->`: every method's training images/s on each Keras backend
  (`benchmarks/speed/backend_speed.py`'s record `benchmarks/results/backend_speed.json`);
- `<!-- table: backend-kernels -->`: the backbone's convolution, pooling and matmul kernels timed
  alone on each backend (`benchmarks/speed/backend_kernels.py`, `backend_kernels.json`);
- `<!-- table: speed -->`: the records of the speed scripts (`SPEED_SCRIPTS`),
  `benchmarks/results/speed_<script>.json` (`speed_evaluation_scale_<N>.json`, one per size);
- `<!-- table: configs METHOD -->`: the recipes `recipes/configs/METHOD_*.json` and their
  settings;
- `<!-- table: paper-backbones -->`: every paper recipe's backbone, variant, image size,
  preprocessing, frozen BatchNorm and the ImageNet weights file it expects (its `backbone`
  entry); `<!-- table: paper-weights -->`: each expected file with its digest and the
  `keras-dml backbones convert` command that makes the weights from it;
- `<!-- table: zoo -->`: the model cards of `model_zoo/` (`keras_dml.zoo.list_models`) with the test
  metrics they record.

Under the speed and recipes tables the hook says where their rows come from: a script's record
(its command, date and machine), or, for a recipes table, the file's note that its rows were
copied by hand before the script wrote records.
Numbers in the prose come from value markers, `<!-- value: KIND ARGUMENT ... -->`
(`docs/record_values.py` lists the kinds).

An unknown marker stops the build with one line naming the markers that exist.
"""

import glob
import html
import json
import os
import re
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
sys.path.insert(0, ROOT)  # the benchmarks package of this checkout (MkDocs runs from elsewhere)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record_values import render_values  # noqa: E402

from benchmarks.accuracy import reality_check_table, runtime_pairs  # noqa: E402
from benchmarks.accuracy.table import (  # noqa: E402
    METRICS,
    differences_from_baseline,
    loss_of,
    read_records,
    signed_spread,
    train_time,
)

MARKER = re.compile(r"^<!-- table: ([\w-]+)(?: (\w+))? -->$", re.M)


def markdown_table(header, rows):
    """A Markdown table: `header` a list of column names, `rows` lists of cell strings."""
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def describe_loss(loss):
    """`name (option=value, ...)` of a run-config loss entry, or its PML recipe's baseline."""
    if "baseline" in loss:
        return f"same recipe as `{loss['baseline']}`"
    options = ", ".join(f"{k}={v}" for k, v in loss.items() if k != "name")
    return f"{loss.get('name', '')}" + (f" ({options})" if options else "")


ACCURACY = os.path.join(RESULTS, "accuracy_hangul.jsonl")
# The reality-check rows measured after the accuracy table's (the new losses, re-ranking).
REALITY_CHECK = os.path.join(RESULTS, "reality_check_hangul.jsonl")
# Reality-check rows and seeds trained again on a second runtime (not in its table).
RUNTIME_PAIRS = os.path.join(RESULTS, "runtime_pairs_hangul.jsonl")


def reality_check():
    """The reality-check table as Markdown (`benchmarks/accuracy/reality_check_table.py`)."""
    rows, diverged = reality_check_table.latest_runs([ACCURACY, REALITY_CHECK])
    return "\n".join(reality_check_table.format_table(rows, markdown=True, diverged=diverged))


def runtime_pairs_table():
    """The second-runtime runs next to the reality-check records of the same row and seed."""
    rows = reality_check_table.latest_per_seed([ACCURACY, REALITY_CHECK])
    pairs = runtime_pairs.runtime_pairs(rows, read_records(RUNTIME_PAIRS))
    return "\n".join(runtime_pairs.format_table(rows, pairs, markdown=True))


def accuracy_table(path=ACCURACY):
    """Mean over the recorded seeds of each row, in record order."""
    rows = []
    for row, records in read_records(path).items():
        means = [np.mean([r["metrics"][k] for r in records]) for k in METRICS]
        loss = loss_of(records[-1]) if "settings" in records[-1] else {}
        rows.append(
            [
                f"`{row}`",
                describe_loss(loss) if loss else "",
                ", ".join(str(seed) for seed in sorted(r["seed"] for r in records)),
                *(f"{m:.3f}" for m in means),
                train_time(records),
            ]
        )
    header = ["row", "loss", "seeds", "R@1", "MAP@R", "R-Prec", "NMI", "train time"]
    return markdown_table(header, rows)


def accuracy_records_tables(name):
    """Both accuracy tables of another records file, `benchmarks/results/NAME.jsonl` (the
    pretrained regime's second backbone, the `kanji` dataset)."""
    path = os.path.join(RESULTS, f"{name}.jsonl")
    if not os.path.exists(path):
        raise ValueError(f"no records {path} for the marker `accuracy-records {name}`")
    return accuracy_table(path) + "\n\n" + accuracy_differences(path)


def accuracy_differences(path=ACCURACY):
    """Each row minus the baseline trained with the same loss, on their shared seeds: the mean
    difference and, over several seeds, its smallest and largest per-seed value."""
    rows = [
        [
            f"`{entry['row']}`",
            f"`{entry['baseline']}`",
            ", ".join(map(str, entry["seeds"])),
            signed_spread(entry, "recall@1"),
            signed_spread(entry, "map@r"),
        ]
        for entry in differences_from_baseline(read_records(path))
        if entry["baseline"] is not None
    ]
    header = ["row", "baseline", "seeds", "R@1 (seed range)", "MAP@R (seed range)"]
    return markdown_table(header, rows)


def recipes_record(dataset, results=RESULTS):
    """`recipes_<dataset>.json` of the `results` folder."""
    path = os.path.join(results, f"recipes_{dataset}.json")
    if not os.path.exists(path):
        raise ValueError(
            f"no record benchmarks/results/recipes_{dataset}.json; run "
            f"`python -m benchmarks.accuracy.recipes --dataset {dataset}` or check the marker's "
            "dataset"
        )
    with open(path) as f:
        return json.load(f)


def recipes_provenance(dataset, results=RESULTS):
    """Where the recipes table of `dataset` comes from: the run's command and machine, or the
    record's `source` where its rows were copied by hand."""
    record = recipes_record(dataset, results)
    if "command" in record:
        return (
            f"Source: `benchmarks/results/recipes_{dataset}.json`, written by `{record['command']}`"
            f" on {record['date']}, {describe_machine(record['machine'])}."
        )
    source = html.escape(record["source"], quote=False)
    return f"Source: `benchmarks/results/recipes_{dataset}.json`, {source}."


def recipes_table(dataset, results=RESULTS):
    """`benchmarks/accuracy/recipes.py`'s summary of `dataset`, one row per method."""
    summary = recipes_record(dataset, results)
    rows = [
        [
            r["method"],
            *(f"{r[k]:.4f}" for k in ("recall@1", "recall@2", "map@r", "nmi", "best_val_map@r")),
            f"{r['seconds']:.0f} s",
        ]
        for r in summary["rows"]
    ]
    header = ["method", "R@1", "R@2", "MAP@R", "NMI", "best val MAP@R", "train time"]
    return markdown_table(header, rows)


# The speed table's scripts, in table order; each writes `speed_<script>.json` (`records.py`).
SPEED_SCRIPTS = (
    "speed.evaluation",
    "speed.evaluation_scale",
    "speed.distributed_step",
    "speed.train_step",
    "speed.hub_backbone_step",
    "methods.divide_and_conquer",
    "methods.abe",
    "methods.bier",
    "methods.dcml",
    "speed.inference",
)


def script_of(command):
    """`speed.train_step` of `python -m benchmarks.speed.train_step ...`."""
    return command.split()[2].removeprefix("benchmarks.")


def record_name(command):
    """The record file a speed command writes by default: `speed_<script>.json`, or
    `speed_evaluation_scale_<num-samples>.json` (one record per data size)."""
    script, words = script_of(command).rsplit(".", 1)[-1], command.split()
    if script != "evaluation_scale":
        return f"speed_{script}.json"
    samples = words[words.index("--num-samples") + 1] if "--num-samples" in words else "1000000"
    return f"speed_evaluation_scale_{samples}.json"


def describe_machine(machine):
    """One line of a record's machine: cores, memory, GPUs, versions, load average."""
    gpus = ", ".join(machine.get("gpus") or []) or "no GPU"
    versions = ", ".join(
        f"{name} {machine[key]}"
        for key, name in (("tensorflow", "TensorFlow"), ("keras", "Keras"))
        if key in machine
    )
    load = machine.get("load_average") or ["?"]
    parts = [f"{machine.get('cores')} cores", f"{machine.get('memory_gib')} GiB", gpus, versions]
    return ", ".join(part for part in parts if part) + f", load average {load[0]}"


def speed_record_names(script, results=RESULTS):
    """The record files of `script` in `results`: `speed_<script>.json`, and for
    `evaluation_scale` one `speed_evaluation_scale_<N>.json` per data size, largest first.

    Raises:
        ValueError: `script` has no record (one line naming the command that writes it).
    """
    if script == "speed.evaluation_scale":
        paths = glob.glob(os.path.join(results, "speed_evaluation_scale_*.json"))
        paths.sort(key=lambda path: int(re.search(r"_(\d+)\.json$", path).group(1)), reverse=True)
    else:
        paths = glob.glob(os.path.join(results, f"speed_{script.rsplit('.', 1)[-1]}.json"))
    if not paths:
        raise ValueError(
            f"no record benchmarks/results/{record_name(f'python -m benchmarks.{script}')} for "
            f"the speed table; run `python -m benchmarks.{script}` (it writes the record) or drop "
            f"{script!r} from docs/hooks.py's SPEED_SCRIPTS"
        )
    return [os.path.basename(path) for path in paths]


def speed_sources(results=RESULTS):
    """`[(script, rows, provenance), ...]` in table order, one entry per record file: the rows
    the script formatted from its measurements (`records.py`), the first naming the record's
    command, and the record's file, date and machine."""
    sources = []
    for script in SPEED_SCRIPTS:
        for name in speed_record_names(script, results):
            with open(os.path.join(results, name)) as f:
                record = json.load(f)
            rows = [
                {**row, "command": record["command"] if i == 0 else "same"}
                for i, row in enumerate(record["rows"])
            ]
            provenance = (
                f"`{name}`, written {record['date']} on {describe_machine(record['machine'])}"
            )
            sources.append((script, rows, provenance))
    return sources


def speed_table(results=RESULTS):
    """The speed and memory measurements of the `SPEED_SCRIPTS`, with their targets."""
    rows = [
        [r["what"], "the row above's" if r["command"] == "same" else f"`{r['command']}`"]
        + [r["result"], r["target"]]
        for _, script_rows, _ in speed_sources(results)
        for r in script_rows
    ]
    return markdown_table(["what", "command", "result", "target"], rows)


def speed_provenance(results=RESULTS):
    """Where the speed table's rows come from: one list item per record, naming the scripts
    whose rows it holds, its file, date and machine."""
    scripts_of = {}
    for script, _, provenance in speed_sources(results):
        scripts_of.setdefault(provenance, []).append(f"`benchmarks/{script.replace('.', '/')}.py`")
    lines = ["Sources of the rows above (`benchmarks/results/`):", ""]
    lines += [f"- {', '.join(scripts)}: {source}" for source, scripts in scripts_of.items()]
    return "\n".join(lines)


def configs_table(method):
    """The recipes of `method` in `recipes/configs/`, with the settings that define them."""
    rows = []
    for path in sorted(glob.glob(os.path.join(ROOT, "recipes", "configs", f"{method}_*.json"))):
        with open(path) as f:
            config = json.load(f)
        if config.get("method") != method:
            continue
        loss = config.get("loss") or config.get("model", {}).get("loss") or "built in"
        rows.append(
            [
                f"`recipes/configs/{os.path.basename(path)}`",
                config["dataset"],
                config["backbone"]["name"],
                describe_loss(loss) if isinstance(loss, dict) else loss,
                config["epochs"],
                config["optimizer"]["learning_rate"],
            ]
        )
    if not rows:
        raise ValueError(f"no recipe recipes/configs/{method}_*.json; check the marker's method")
    header = ["recipe", "dataset", "backbone", "loss", "epochs", "learning rate"]
    return markdown_table(header, rows)


def paper_recipes():
    """`{file name: config}` of the recipes whose backbone names its expected ImageNet weights."""
    found = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "recipes", "configs", "*.json"))):
        with open(path) as f:
            config = json.load(f)
        if isinstance(config.get("backbone", {}).get("weights"), dict):
            found[os.path.basename(path)] = config
    if not found:
        raise ValueError("no recipe in recipes/configs/ names its ImageNet weights file")
    return found


def describe_normalization(arguments):
    """The input preprocessing an `ImageNormalization` configuration computes, in words."""
    mode = arguments.get("mode")
    if mode == "custom":
        mean = tuple(arguments["mean"])
        if arguments.get("reverse_channels"):
            return f"BGR minus mean {tuple(int(v) if v == int(v) else v for v in mean[::-1])}"
        return f"RGB minus mean {mean}"
    return {
        "torch": "RGB / 255, ImageNet mean/std",
        "tf": "RGB scaled to [-1, 1]",
        "caffe": "BGR minus the VGG mean",
    }.get(mode, str(mode))


def _use_this_checkout():
    if ROOT not in sys.path:  # keras_dml of this checkout (MkDocs' plugins reset sys.path)
        sys.path.insert(0, ROOT)


def paper_backbones_table():
    """Each paper recipe's backbone, as built from its `backbone` entry."""
    _use_this_checkout()
    from keras_dml.backbones import registry
    from keras_dml.backbones.expected_source import ExpectedSource

    rows = []
    for name, config in paper_recipes().items():
        backbone = config["backbone"]
        options = {k: v for k, v in backbone.items() if k not in ("name", "weights")}
        options.pop("freeze_batchnorm", None)
        normalization = registry.get_spec(backbone["name"]).resolve_normalization(**options)
        rows.append(
            [
                f"`{name}`",
                backbone["name"],
                backbone.get("variant", "default"),
                config["image_size"],
                describe_normalization(normalization),
                "yes" if backbone.get("freeze_batchnorm") else "no",
                ExpectedSource.from_entry(backbone["weights"]).describe(),
            ]
        )
    header = ["recipe", "backbone", "variant", "image size", "preprocessing", "frozen BN"]
    return markdown_table(header + ["expected weights (source file)"], rows)


def paper_weights_table():
    """Each source file the paper recipes expect, its digest and the command converting it."""
    _use_this_checkout()
    from keras_dml.backbones.conversions import conversion_for_options
    from keras_dml.backbones.expected_source import ExpectedSource
    from keras_dml.backbones.imagenet_lookup import imagenet_file_name

    rows = {}
    for config in paper_recipes().values():
        backbone = config["backbone"]
        expected = ExpectedSource.from_entry(backbone["weights"])
        options = {k: v for k, v in backbone.items() if k == "variant"}
        conversion = conversion_for_options(backbone["name"], options)
        command = (
            f"`keras-dml backbones convert --backbone {backbone['name']} --from "
            f"{conversion.source} --state-dict {expected.file} --output ~/.keras/keras_dml/"
            f"backbones/{imagenet_file_name(backbone['name'], options)}`"
        )
        rows[expected.file] = [
            f"`{expected.file}`",
            expected.describe_digests(),
            conversion.download.split(" ")[0],
            command,
        ]
    return markdown_table(["source file", "digest", "download", "conversion"], list(rows.values()))


def zoo_table():
    """Every model card of the zoo: what it is and, when published, its recorded test metrics."""
    if ROOT not in sys.path:  # keras_dml of this checkout (MkDocs' plugins reset sys.path)
        sys.path.insert(0, ROOT)
    from keras_dml.zoo import list_models

    rows = []
    for card in list_models():
        metrics = card.get("metrics") or {}
        scores = [f"{metrics[k]:.3f}" if k in metrics else "" for k in ("recall@1", "map@r")]
        rows.append(
            [f"`{card['name']}`", card["status"], card["method"], card["backbone"]]
            + [card["dataset"], *scores]
        )
    header = ["name", "status", "method", "backbone", "dataset", "R@1", "MAP@R"]
    return markdown_table(header, rows)


def backend_speed_table(results=RESULTS):
    """Training images/s of every method on each Keras backend, from
    `benchmarks/results/backend_speed.json` (`benchmarks/speed/backend_speed.py`), with each
    backend's ratio to TensorFlow and the record's command, date and machine under it."""
    with open(os.path.join(results, "backend_speed.json")) as f:
        record = json.load(f)
    measured = record["measured"]
    backends = list(next(iter(measured.values())))
    others = [b for b in backends if b != "tensorflow"]
    header = ["row", *(f"{b} images/s" for b in backends)]
    header += [f"{b} / tensorflow" for b in others if "tensorflow" in backends]
    rows = []
    for row, by_backend in measured.items():
        cells = [f"`{row}`", *(f"{by_backend[b]['steady']:.1f}" for b in backends)]
        if "tensorflow" in backends:
            tf_rate = by_backend["tensorflow"]["steady"]
            cells += [f"{by_backend[b]['steady'] / tf_rate:.2f}x" for b in others]
        rows.append(cells)
    # `--keep-rows` records every command whose rows the record holds, the last one first.
    commands = record.get("commands") or [record["command"]]
    source = "; rows kept from ".join(f"`{command}`" for command in reversed(commands))
    source += f", written {record['date']} on {describe_machine(record['machine'])}"
    return markdown_table(header, rows) + f"\n\nSource (`backend_speed.json`): {source}"


def backend_kernels_table(results=RESULTS):
    """The backbone's kernels timed alone on each backend, from
    `benchmarks/results/backend_kernels.json` (`benchmarks/speed/backend_kernels.py`):
    milliseconds per call and each backend's time against TensorFlow's, with the record's source
    under it."""
    with open(os.path.join(results, "backend_kernels.json")) as f:
        record = json.load(f)
    measured = record["measured"]
    backends = list(measured)
    others = [b for b in backends if b != "tensorflow" and "tensorflow" in backends]
    header = ["kernel", *(f"{b} ms" for b in backends), *(f"{b} / tensorflow" for b in others)]
    rows = []
    for kernel in next(iter(measured.values()))["milliseconds"]:
        times = {b: measured[b]["milliseconds"][kernel] for b in backends}
        cells = [kernel, *(f"{times[b]:.1f}" for b in backends)]
        cells += [f"{times[b] / times['tensorflow']:.2f}x" for b in others]
        rows.append(cells)
    shape = record.get("shape", {})
    source = (
        f"`{record['command']}` (a batch of {shape.get('batch')} maps of {shape.get('size')} x "
        f"{shape.get('size')} x {shape.get('channels')}, 3 x 3 filters; matmul "
        f"{shape.get('matmul')}^2), written {record['date']} on "
        f"{describe_machine(record['machine'])}"
    )
    return markdown_table(header, rows) + f"\n\nSource (`backend_kernels.json`): {source}"


TABLES = {
    "accuracy": lambda _: accuracy_table(),
    "backend-speed": lambda _: backend_speed_table(),
    "backend-kernels": lambda _: backend_kernels_table(),
    "accuracy-differences": lambda _: accuracy_differences(),
    "accuracy-records": lambda name: accuracy_records_tables(name),
    "reality-check": lambda _: reality_check(),
    "runtime-pairs": lambda _: runtime_pairs_table(),
    "recipes": lambda dataset: recipes_table(dataset) + "\n\n" + recipes_provenance(dataset),
    "speed": lambda _: speed_table() + "\n\n" + speed_provenance(),
    "configs": configs_table,
    "paper-backbones": lambda _: paper_backbones_table(),
    "paper-weights": lambda _: paper_weights_table(),
    "zoo": lambda _: zoo_table(),
}


def render_tables(markdown, page_name="page"):
    """`markdown` with each table marker replaced by its table.

    Raises:
        ValueError: a marker names no known table (one line naming those that exist).
    """

    def replace(match):
        name, argument = match.group(1), match.group(2)
        if name not in TABLES:
            raise ValueError(
                f"{page_name}: unknown table marker {name!r}; use one of {sorted(TABLES)}"
            )
        return TABLES[name](argument)

    return MARKER.sub(replace, markdown)


def on_page_markdown(markdown, page, **kwargs):
    return render_values(render_tables(markdown, page.file.src_uri), page.file.src_uri)
