"""Embedding quality at one shared budget: keras-dml recipes against PyTorch / PML, side by side.

On a many-class offline dataset (default: rendered Hangul syllables, `keras_dml.data`'s
`hangul`; `--dataset kanji` the rendered kanji; hundreds of training classes and unseen test
classes), every row trains with the same budget (epochs, batch = classes x m, Adam learning rate,
embedding size, backbone, image size) and seeds, and is tested on the unseen classes with
`keras_dml.evaluation.evaluate` (R@1, MAP@R, R-Precision, NMI). Rows:

- `defaults`: `keras-dml train --method baseline` with only the dataset and the epochs given
  (every other setting is the library's default, fitted to the data; recorded in `settings`);
- `baseline/<loss>`: the baseline with each registered loss family;
- `<method>/paper` and `<method>/best`: every ensemble method with its paper's loss and with the
  best baseline loss, at the same total embedding size (D&C with its conquer stage: the
  learners merged and the full embedding fine-tuned on all the data in the last epoch);
- `<method>/<loss>`: a method with another loss of `LOSSES` than the best (e.g. `bier/arcface`);
- `<method>/best-<ablation>`: a `best` row with one method option changed (`ABLATIONS`), and
  `<method>/<loss>-<ablation>` a `<method>/<loss>` row with one model argument changed
  (`MODEL_ABLATIONS`), to find out why an ensemble trails the baseline;
- `pml/<recipe>`: PyTorch + pytorch-metric-learning on the same backbone architecture, batches and
  budget (only when torch and PML are installed: the `pml` extra, `pip install -e ".[pml]"`);
  `pml/dc-normalized_softmax` (`rows.TORCH_METHOD_ROWS`): D&C written in PyTorch apart from
  keras-dml (`torch_divide_and_conquer.py`) at `dc/best`'s settings, compared with
  `pml/normalized_softmax`.

Two regimes (`--regime`): `scratch` (default) trains every row from a random initialisation;
`pretrained` is the papers' setting on this machine's data: the baseline first trains the budget's
backbone on the dataset's `pretrain` split (Hangul syllables in neither the training nor the test
set; `PRETRAIN` gives its epochs and loss), once per output folder, and every row then fine-tunes
from that backbone with the same budget (a `pml/` row with its weights copied into the translated
backbone). Its rows are recorded as `ROW@pretrained`.

The papers' input size: `--set image_size=224 --dataset-option render_size=32` trains and tests
at 224 px on the 32 px renders upscaled by the input pipeline (one small cache; a GPU's work).

keras-hub backbones: `<row>-hub_resnet` and `<row>-hub_vit` (`rows.HUB_BACKBONES`: a ResNet-18
and a small ViT) train the baseline and D&C on a keras-hub backbone from random initialisation,
next to the budget backbone's rows. The script saves each as a preset folder,
`OUTPUT/hub_presets/<name>`; `--hub-preset NAME=PRESET` (a folder or a `kaggle://` / `hf://`
handle) trains NAME's rows from that preset's own weights instead, recorded as `ROW@preset`.

With `--rerank aqe,alpha_qe,dba,k_reciprocal`, each row's test embeddings are also evaluated
with each re-ranking (`keras_dml.search.rerank`, default parameters; Recall@K, MAP@R,
R-Precision) and stored as `metrics_rerank` (`{method: metrics}`) next to `metrics`; the table
then adds the re-ranked R@1 / MAP@R of every row and their change from its plain metrics.

Each finished run is appended to `OUTPUT/results.jsonl`, so rows can be run in several
invocations (`--rows`) and the table (`--table`, `table.py`) aggregates every result
found: the mean over seeds and the seeds, then each row's signed difference from the baseline
trained with the same loss, on the seeds both have.

Usage:
    python -m benchmarks.accuracy.run --list
    python -m benchmarks.accuracy.run --rows defaults,baseline/normalized_softmax,pml/proxy_anchor
    python -m benchmarks.accuracy.run --regime pretrained --rows baseline/normalized_softmax,dc/best
    python -m benchmarks.accuracy.run --regime pretrained --set image_size=224 \
        --dataset-option render_size=32 --rows baseline/normalized_softmax,abe/best
    python -m benchmarks.accuracy.run --rows baseline/normalized_softmax --rerank aqe,k_reciprocal
    python -m benchmarks.accuracy.run --rows '*-hub_resnet,*-hub_vit' --seeds 0
    python -m benchmarks.accuracy.run --rows '*-hub_resnet' --set image_size=224 \
        --dataset-option render_size=32 \
        --hub-preset hub_resnet=kaggle://keras/resnetv1/keras/resnet_50_imagenet/3
    python -m benchmarks.accuracy.run --table
"""

import argparse
import fnmatch
import hashlib
import json
import os
import platform
import time

import keras
import numpy as np

# Sibling scripts: the rows (budget, losses, methods, run configs) and the table.
from benchmarks.accuracy.rows import (
    BUDGET,
    HUB_BACKBONES,
    METHODS,
    TORCH_METHOD_ROWS,
    conquer_epoch_of,
    hub_backbone_of,
    keras_config,
    pml_recipe_and_start,
    row_names,
)
from benchmarks.accuracy.table import print_table, table_key
from benchmarks.records import machine
from keras_dml.utils.sha256 import sha256_file

# The pretrained regime's first stage: the baseline on the `pretrain` split with the budget's
# backbone, batches, optimizer and embedding size, this loss and these epochs (one seed, shared by
# every row and seed, as the papers fine-tune one ImageNet checkpoint).
PRETRAIN = {"epochs": 2, "loss": "normalized_softmax", "seed": 0}
REGIMES = ("scratch", "pretrained")
# The regime of a keras-hub row trained from a `--hub-preset`'s own weights (`ROW@preset`).
PRESET_REGIME = "preset"


def hub_preset_folder(name, output, image_size):
    """The preset folder of `HUB_BACKBONES[name]`, saved once as `OUTPUT/hub_presets/<name>`."""
    # Its saved weights are never loaded: each row initialises its own from its seed.
    class_name, arguments, converter = HUB_BACKBONES[name]
    folder = os.path.join(output, "hub_presets", name)
    config_path = os.path.join(folder, "config.json")
    if os.path.exists(config_path):
        with open(config_path) as f:
            saved = json.load(f)["config"]
        if all(saved.get(k) == v for k, v in arguments.items()):
            return folder
    import keras_hub

    shape = {"image_shape": tuple(arguments["image_shape"])}
    backbone = getattr(keras_hub.models, class_name)(**{**arguments, **shape})
    layer = getattr(keras_hub.layers, class_name.replace("Backbone", "ImageConverter"))
    os.makedirs(folder, exist_ok=True)
    backbone.save_to_preset(folder)
    layer(image_size=(image_size, image_size), **converter).save_to_preset(folder)
    return folder


def parse_hub_presets(items):
    """`{name: preset}` of `--hub-preset NAME=PRESET` items.

    Raises:
        ValueError: an item without `=` or naming no `HUB_BACKBONES` entry (one line).
    """
    presets = {}
    for item in items:
        name, equals, preset = item.partition("=")
        if not equals or not preset or name not in HUB_BACKBONES:
            raise ValueError(
                f"--hub-preset {item!r}: use NAME=PRESET with NAME one of {sorted(HUB_BACKBONES)} "
                "and PRESET a preset folder or a kaggle:// or hf:// handle"
            )
        presets[name] = preset
    return presets


def pretrained_backbone(dataset, budget, output, dataset_options=None):
    """The budget's backbone trained by the baseline on the dataset's `pretrain` split.

    Trained once per output folder and settings (`PRETRAIN`, the budget, the dataset options)
    and cached as `OUTPUT/pretrained/<digest>/backbone.weights.h5`.

    Args:
        dataset: str. A dataset with a `"pretrain"` split (classes disjoint from its training
            and test classes), e.g. `"hangul"`.
        budget: dict. The shared budget.
        output: str. The benchmark's output folder.
        dataset_options: dict or `None`. Options of the dataset loader.

    Returns:
        `(weights path, info dict)`; the info names the weights' sha256, the settings digest,
        classes, images and epochs.
    """
    key = {
        "dataset": dataset,
        "dataset_options": dataset_options or {},
        "pretrain": PRETRAIN,
        "budget": {k: v for k, v in budget.items() if k != "epochs"},
    }
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    folder = os.path.join(output, "pretrained", digest)
    path = os.path.join(folder, "backbone.weights.h5")
    info_path = os.path.join(folder, "pretrained.json")
    if os.path.exists(path) and os.path.exists(info_path):
        with open(info_path) as f:
            info = json.load(f)
        # The weights' digest names the backbone in every record: two trainings of the same
        # settings (another machine, another session) give other weights, and a row is compared
        # only with a baseline fine-tuned from the same ones.
        return path, {**info, "sha256": sha256_file(path)}

    from keras_dml.data import load_dataset
    from keras_dml.training import train

    data = load_dataset(
        dataset, split="pretrain", image_size=budget["image_size"], **(dataset_options or {})
    )
    # The run's validation and test metrics (logged, not used): every 10th class of its own data.
    check = data.subset(np.flatnonzero(data.labels % 10 == 0))
    config = keras_config(
        "baseline/" + PRETRAIN["loss"], dataset, budget, None, PRETRAIN["seed"], dataset_options
    )
    config.update(epochs=PRETRAIN["epochs"], eval_every=PRETRAIN["epochs"])
    splits = {"train": data, "val": check, "test": check}
    run = train(config, os.path.join(folder, "run"), verbose=0, splits=splits, report=False)
    run["model"].backbone.save_weights(path)
    info = {
        "sha256": sha256_file(path),
        "digest": digest,
        "classes": int(data.num_classes),
        "images": len(data),
        "epochs": PRETRAIN["epochs"],
        "loss": PRETRAIN["loss"],
        "seconds": float(run["seconds"]),
    }
    with open(info_path, "w") as f:
        json.dump(info, f)
    return path, info


def run_keras(
    row,
    splits,
    dataset,
    budget,
    best_loss,
    seed,
    output,
    dataset_options=None,
    weights=None,
    hub_preset=None,
):
    from keras_dml.training import train

    config = keras_config(
        row, dataset, budget, best_loss, seed, dataset_options, weights, hub_preset
    )
    run_dir = os.path.join(output, row.replace("/", "_"), f"seed{seed}")
    if weights is not None:
        run_dir = os.path.join(output, "pretrained_rows", row.replace("/", "_"), f"seed{seed}")
    run = train(config, run_dir, verbose=0, splits=splits)
    with open(os.path.join(run_dir, "config.json")) as f:
        used = json.load(f)  # what the run fitted to the data (the `defaults` row sets little)
    settings = {
        "backbone": backbone_name(row, used["backbone"], weights),
        "batch_size": used["batch_size"],
        "m_per_class": used["m_per_class"],
        "model": used["model"],
        "loss": used["loss"],
        "optimizer": used["optimizer"],
        "method_options": used.get("method_options", {}),
    }
    if hub_backbone_of(row):  # the preset's architecture, as keras-hub saved it
        from keras_dml.backbones.hub.preset import preset_json

        settings["hub_architecture"] = preset_json(used["backbone"]["preset"], "config.json")
    return run["metrics"], run["seconds"], settings, run["model"]


def backbone_name(row, entry, weights):
    """A record's backbone: its name, or `keras_hub:<hub name>` for a keras-hub row from random
    initialisation and `keras_hub:<preset>` for one from a preset's weights, so that a row is
    compared only with the baseline on the same backbone (`table.differences_from_baseline`)."""
    hub = hub_backbone_of(row)
    if hub is None:
        return entry["name"]
    return f"keras_hub:{entry['preset'] if weights == 'imagenet' else hub}"


def test_embeddings(model, splits, image_size):
    """The test protocol's embeddings: `(embeddings, labels)` of `test`, or of `gallery` then
    `query` (four arrays) for a query/gallery dataset."""
    from keras_dml.evaluation import embed

    def of(data):
        return embed(
            model, data.as_tf_dataset(training=False, batch_size=256, image_size=image_size)
        )

    if "query" in splits:
        return (*of(splits["gallery"]), *of(splits["query"]))
    return of(splits["test"])


def rerank_metrics(embeddings, methods):
    """`{method: metrics}`: Recall@K, MAP@R and R-Precision of `evaluate` with each re-ranking.

    Args:
        embeddings: `(embeddings, labels)` (leave-one-out) or `(gallery, gallery labels,
            queries, query labels)`, as `test_embeddings` returns.
        methods: list of re-ranking names (`keras_dml.search.rerank`).

    Returns:
        dict of dicts of floats (NMI left out: re-ranking does not change it).
    """
    from keras_dml.evaluation import evaluate

    out = {}
    for method in methods:
        result = evaluate(*embeddings, metrics=("recall", "map@r", "r_precision"), rerank=method)
        out[method] = {k: float(v) for k, v in result.items() if not isinstance(v, str)}
    return out


def pml_settings(row, budget):
    """A `pml/` row's recorded settings: its backbone and PML recipe and, for a
    `TORCH_METHOD_ROWS` row, its method and the method's settings (`keras_config`'s for the
    `<method>/best` row); `table.loss_of` pairs such a row with `pml/<recipe>`."""
    if row not in TORCH_METHOD_ROWS:
        recipe, start = pml_recipe_and_start(row)
        settings = {"backbone": budget["backbone"], "recipe": recipe}
        return settings if start == "pytorch" else {**settings, "start": start}
    method, recipe = TORCH_METHOD_ROWS[row]
    if method != "dc":
        raise ValueError(f"{row}: no PyTorch implementation of {method!r}")
    model, _, options = METHODS[method]
    epochs = budget["epochs"]
    method_options = {
        "num_learners": model["num_learners"],
        "recluster_every": options["recluster_every"],
        "conquer_epoch": conquer_epoch_of(epochs),  # as keras_config's dc rows
    }
    return {
        "backbone": budget["backbone"],
        "recipe": recipe,
        "method": method,
        "method_options": method_options,
    }


def run_pml(row, splits, budget, seed, weights=None):
    """Trains a `pml/` row (from the Keras backbone weights file `weights` when given) and
    evaluates it: `(metrics, train seconds, (test embeddings, test labels))`."""
    from benchmarks.accuracy import torch_reference
    from keras_dml import backbones
    from keras_dml.evaluation import evaluate

    size = budget["image_size"]
    recipe, start = pml_recipe_and_start(row)
    keras.utils.set_random_seed(seed)  # the Keras initialisation a keras-start row copies
    backbone = backbones.get(budget["backbone"], input_shape=(size, size, 3))
    train, test = splits["train"], splits["test"]
    data = (backbone, _images(train, size), train.labels, _images(test, size), budget, seed)
    if row in TORCH_METHOD_ROWS:
        from benchmarks.accuracy import torch_divide_and_conquer

        options = pml_settings(row, budget)["method_options"]
        embeddings, seconds = torch_divide_and_conquer.train_and_embed_dc(
            *data,
            num_learners=options["num_learners"],
            initial_weights=weights,
            recluster_every=options["recluster_every"],
            conquer_epoch=options["conquer_epoch"],
        )
    else:
        embeddings, seconds = torch_reference.train_and_embed(
            recipe, *data, initial_weights=weights, start=start
        )
    return evaluate(embeddings, test.labels), seconds, (embeddings, test.labels)


def runtime(row):
    """`{"backend", "device"}` a row trained on, recorded with it: rows run on CPU with
    TensorFlow here and on a GPU with JAX / PyTorch elsewhere, and the table says which."""
    if row.startswith("pml/"):
        import torch

        gpu = torch.cuda.is_available()
        return {"backend": "pytorch", "device": torch.cuda.get_device_name(0) if gpu else "cpu"}
    import keras

    backend, device = keras.backend.backend(), "cpu"
    if backend == "jax":
        import jax

        first = jax.devices()[0]
        device = "cpu" if first.platform == "cpu" else first.device_kind
    elif backend == "torch":
        import torch

        device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    elif backend == "tensorflow":
        import tensorflow as tf

        gpus = tf.config.list_physical_devices("GPU")
        if gpus:
            device = tf.config.experimental.get_device_details(gpus[0]).get("device_name", "gpu")
    return {"backend": backend, "device": device}


def _images(data, size):
    """The evaluation-preprocessed images of an in-memory split, uint8-range floats."""
    # `as_dataset`: the backend's own pipeline (no TensorFlow on the JAX / PyTorch backends).
    dataset = data.as_dataset(training=False, batch_size=1024, image_size=size)
    if hasattr(dataset, "__getitem__"):  # a keras.utils.PyDataset: its batches by index
        batches = [dataset[step] for step in range(len(dataset))]
    else:
        batches = list(dataset)
    return np.concatenate([np.asarray(x) for x, _ in batches])


def parse_dataset_options(items):
    """`{key: value}` of `--dataset-option KEY=VALUE` items: VALUE as JSON, else a bare string
    (e.g. a folder). Also read by `device_bundle.py`."""
    options = {}
    for item in items:
        key, _, value = item.partition("=")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def build_parser():
    """The command line of this script (also read by the README command checks)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="hangul")
    parser.add_argument("--rows", default="*", help="comma-separated row names or globs")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--best-loss", default="normalized_softmax")
    parser.add_argument("--output", default="runs/accuracy")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a budget entry, e.g. --set epochs=1",
    )
    parser.add_argument(
        "--dataset-option",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="an option of the dataset loader, e.g. --dataset-option num_train_classes=100",
    )
    parser.add_argument("--regime", choices=REGIMES, default="scratch")
    parser.add_argument(
        "--hub-preset",
        action="append",
        default=[],
        metavar="NAME=PRESET",
        help="train the <row>-NAME rows from this keras-hub preset's own weights (a folder or a "
        "kaggle:// or hf:// handle), e.g. hub_vit=kaggle://keras/vit/keras/"
        "vit_base_patch16_224_imagenet/4",
    )
    parser.add_argument(
        "--rerank",
        default="",
        metavar="NAMES",
        help="also record each row's metrics re-ranked by these methods, e.g. aqe,k_reciprocal",
    )
    parser.add_argument("--list", action="store_true", help="list the rows and exit")
    parser.add_argument("--table", action="store_true", help="print the table and exit")
    return parser


def select_rows(names, patterns):
    """`(selected, unknown)`: the rows of `names` matching any glob of `patterns`, and the
    patterns that match no row."""
    selected = [n for n in names if any(fnmatch.fnmatch(n, p) for p in patterns)]
    unknown = [p for p in patterns if not any(fnmatch.fnmatch(n, p) for n in names)]
    return selected, unknown


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)

    budget = dict(BUDGET)
    for item in args.set:
        key, value = item.split("=", 1)
        budget[key] = type(BUDGET[key])(value) if key in BUDGET else value
    dataset_options = parse_dataset_options(args.dataset_option)
    try:
        hub_presets = parse_hub_presets(args.hub_preset)
    except ValueError as error:
        parser.error(str(error))
    names = row_names(args.best_loss)
    if args.list:
        print("\n".join(names))
        return
    results = os.path.join(args.output, "results.jsonl")
    if args.table:
        print_table(results)
        return
    methods = [name for name in args.rerank.split(",") if name]
    try:
        from keras_dml.search.rerank import resolve_rerank

        for name in methods:
            resolve_rerank(name)
    except ValueError as error:
        parser.error(str(error))
    patterns = args.rows.split(",")
    selected, unknown = select_rows(names, patterns)
    if unknown:
        parser.error(f"no row matches {unknown}; see --list")
    if args.regime == "pretrained":
        # `defaults` sets nothing but the data, and the pretrained backbone is the budget's,
        # not a keras-hub one; a `pml/` row copies its weights into the translated backbone.
        skipped = [n for n in selected if n == "defaults" or hub_backbone_of(n)]
        selected = [n for n in selected if n not in skipped]
        if skipped:
            print(f"[accuracy] scratch regime only, skipped: {', '.join(skipped)}", flush=True)
        if not selected:
            parser.error("no row of the budget backbone selected for --regime pretrained")

    from keras_dml.evaluation import NonFiniteEmbeddingsError
    from keras_dml.training import RunConfig, load_splits

    os.makedirs(args.output, exist_ok=True)
    print(
        f"[accuracy] {platform.node()} {os.cpu_count()} cores, load {os.getloadavg()}, "
        f"budget {budget}",
        flush=True,
    )
    weights, pretrained = None, None
    if args.regime == "pretrained":
        weights, pretrained = pretrained_backbone(
            args.dataset, budget, args.output, dataset_options
        )
        print(f"[accuracy] pretrained backbone {weights}: {pretrained}", flush=True)
    presets = {
        hub: hub_presets.get(hub) or hub_preset_folder(hub, args.output, budget["image_size"])
        for hub in {hub_backbone_of(n) for n in selected} - {None}
    }
    splits = {}
    for seed in [int(s) for s in args.seeds.split(",")]:
        for row in selected:
            config = RunConfig.from_dict(
                keras_config("defaults", args.dataset, budget, None, seed, dataset_options)
            ).to_dict()
            if seed not in splits:
                splits[seed] = load_splits({**config, "image_size": budget["image_size"]})
            start, host = time.perf_counter(), machine()
            hub = hub_backbone_of(row)
            row_weights = "imagenet" if hub in hub_presets else weights
            # Fields of every record of this run, trained or diverged.
            common = {
                "row": row,
                "seed": seed,
                "dataset": args.dataset,
                **({"dataset_options": dataset_options} if dataset_options else {}),
                **({"regime": args.regime, "pretrained": pretrained} if pretrained else {}),
                **({"regime": PRESET_REGIME} if row_weights == "imagenet" else {}),
                "budget": budget,
            }
            try:
                if row.startswith("pml/"):
                    settings = pml_settings(row, budget)
                    try:
                        metrics, seconds, embeddings = run_pml(
                            row, splits[seed], budget, seed, row_weights
                        )
                    except ImportError as error:
                        print(f"[accuracy] {row}: skipped ({error})", flush=True)
                        continue
                else:
                    metrics, seconds, settings, model = run_keras(
                        row,
                        splits[seed],
                        args.dataset,
                        budget,
                        args.best_loss,
                        seed,
                        args.output,
                        dataset_options,
                        row_weights,
                        presets.get(hub),
                    )
            except NonFiniteEmbeddingsError as error:
                # A run whose embeddings came out NaN or Inf diverged: a result of the table,
                # not a crash. Its record has `diverged` instead of metrics, so the tables say
                # so (`table.diverged_runs`) and `parallel_rows.py --skip-recorded`
                # does not train it again; every other error still fails the run.
                record = {
                    **common,
                    "diverged": str(error),
                    "wall": time.perf_counter() - start,
                    "machine": host,
                    "runtime": runtime(row),
                }
                with open(results, "a") as f:
                    f.write(json.dumps(record) + "\n")
                print(f"[accuracy] {table_key(record)} seed {seed}: diverged ({error})", flush=True)
                continue
            record = {
                **common,
                "settings": settings,
                "metrics": {k: v if isinstance(v, str) else float(v) for k, v in metrics.items()},
                "seconds": float(seconds),
                "wall": time.perf_counter() - start,
                # The CPU model and load when the row started (`records.machine`): train times
                # on shared cores compare only under a like load, and weights differ by machine.
                "machine": host,
                "runtime": runtime(row),
            }
            if methods and not row.startswith("pml/"):
                embeddings = test_embeddings(model, splits[seed], budget["image_size"])
            if methods:
                record["metrics_rerank"] = rerank_metrics(embeddings, methods)
            with open(results, "a") as f:
                f.write(json.dumps(record) + "\n")
            m = record["metrics"]
            print(
                f"[accuracy] {table_key(record)} seed {seed}: R@1 {m['recall@1']:.3f} "
                f"MAP@R {m['map@r']:.3f} train {seconds:.0f}s",
                flush=True,
            )
            for method, m in record.get("metrics_rerank", {}).items():
                print(f"[accuracy]   + {method}: R@1 {m['recall@1']:.3f} MAP@R {m['map@r']:.3f}")
    print_table(results)


if __name__ == "__main__":
    main()
