"""Embedding quality at one shared budget: keras-dml recipes against PyTorch / PML, side by side.

On a many-class offline dataset (default: rendered Hangul syllables, `keras_dml.data`'s
`hangul`, hundreds of training classes and unseen test classes), every row trains with the same
budget (epochs, batch = classes x m, Adam learning rate, embedding size, backbone, image size) and
seeds, and is tested on the unseen classes with `keras_dml.evaluation.evaluate` (R@1, MAP@R,
R-Precision, NMI). Rows:

- `defaults`: `keras-dml train --method baseline` with only the dataset and the epochs given
  (every other setting is the library's default, fitted to the data; recorded in `settings`);
- `baseline/<loss>`: the baseline with each registered loss family;
- `<method>/paper` and `<method>/best`: every ensemble method with its paper's loss and with the
  best baseline loss, at the same total embedding size (D&C with its conquer stage: the
  learners merged and the full embedding fine-tuned on all the data in the last epoch);
- `<method>/best-<ablation>`: a `best` row with one method option changed (`ABLATIONS`), to
  find out why an ensemble trails the baseline;
- `pml/<recipe>`: PyTorch + pytorch-metric-learning on the same backbone architecture, batches and
  budget (only when torch and PML are installed: `pip install torch pytorch-metric-learning`).

Two regimes (`--regime`): `scratch` (default) trains every row from a random initialisation;
`pretrained` is the papers' setting on this machine's data: the baseline first trains the budget's
backbone on the dataset's `pretrain` split (Hangul syllables in neither the training nor the test
set; `PRETRAIN` gives its epochs and loss), once per output folder, and every keras-dml row then
fine-tunes from that backbone with the same budget. Its rows are recorded as `ROW@pretrained`.

Each finished run is appended to `OUTPUT/results.jsonl`, so rows can be run in several
invocations (`--rows`) and the table (`--table`) aggregates every result found: the mean over
seeds, and the number of seeds.

Usage:
    python benchmarks/accuracy.py --list
    python benchmarks/accuracy.py --rows defaults,baseline/normalized_softmax,pml/proxy_anchor
    python benchmarks/accuracy.py --regime pretrained --rows baseline/normalized_softmax,dc/best
    python benchmarks/accuracy.py --table
"""

import argparse
import fnmatch
import hashlib
import json
import os
import platform
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

BUDGET = {
    "epochs": 3,
    "batch_size": 128,
    "m_per_class": 4,
    "learning_rate": 1e-3,
    "embedding_dim": 128,
    "image_size": 32,
    "backbone": "vgg_small",
}

# Loss families of the baseline rows: name -> run-config `loss` entry.
LOSSES = {
    "margin": {"name": "margin", "beta": 1.2, "margin": 0.2, "sampling": "distance_weighted"},
    "multi_similarity": {"name": "multi_similarity"},
    "triplet": {"name": "triplet", "margin": 0.2, "mining": "semi-hard"},
    "contrastive": {"name": "contrastive"},
    "binomial_deviance": {"name": "binomial_deviance"},
    "proxy_nca": {"name": "proxy_nca"},
    "proxy_anchor": {"name": "proxy_anchor"},
    "normalized_softmax": {"name": "normalized_softmax"},
    "arcface": {"name": "arcface"},
    "cosface": {"name": "cosface"},
}

# Ensemble methods: name -> (model options at the budget's embedding size, paper loss, options).
METHODS = {
    "dc": ({"num_learners": 4}, LOSSES["margin"], {"recluster_every": 1}),
    # freeze_backbone as in the runs recorded before its default became False (the ablation
    # row hdc/best-unfrozen is the default now).
    "hdc": ({"max_learners": 4}, LOSSES["margin"], {"division_every": 1, "freeze_backbone": True}),
    "bier": ({"num_learners": 3}, None, {}),
    "abe": ({"num_learners": 4}, None, {}),
    "mheads": ({"num_learners": 4}, None, {}),
    "dcml": ({"num_learners": 4, "num_compositors": 8}, LOSSES["margin"], {}),
}

# Ablations of a `<method>/best` row: row -> the method_options it changes. They show why an
# ensemble trails the baseline at this budget (README, "Embedding quality").
ABLATIONS = {
    "dc/best-without-conquer": {"conquer_epoch": None},  # divided to the end, never merged
    # Hierarchical D&C freezes the backbone for the epoch after each division (reference code);
    # divided every epoch, a 3-epoch run trains its backbone in the first epoch only.
    "hdc/best-unfrozen": {"freeze_backbone": False},
}

# The pretrained regime's first stage: the baseline on the `pretrain` split with the budget's
# backbone, batches, optimizer and embedding size, this loss and these epochs (one seed, shared by
# every row and seed, as the papers fine-tune one ImageNet checkpoint).
PRETRAIN = {"epochs": 2, "loss": "normalized_softmax", "seed": 0}
REGIMES = ("scratch", "pretrained")

PML_RECIPES = ("normalized_softmax", "proxy_anchor", "multi_similarity", "margin", "arcface")


def row_names(best_loss):
    names = ["defaults"] + [f"baseline/{loss}" for loss in LOSSES]
    for method in METHODS:
        names += [f"{method}/paper", f"{method}/best"]
        names += [row for row in ABLATIONS if row.startswith(f"{method}/")]
    names += [f"pml/{recipe}" for recipe in PML_RECIPES]
    return names


def table_key(record):
    """The table row of a record: its row name, with `@<regime>` outside the scratch regime."""
    regime = record.get("regime", "scratch")
    return record["row"] if regime == "scratch" else f"{record['row']}@{regime}"


def keras_config(
    row, dataset, budget, best_loss, seed, dataset_options=None, backbone_weights=None
):
    """The run configuration of a keras-dml row.

    Args:
        row: str. A row name of `row_names` (not `pml/...`).
        dataset: str. Registered dataset name.
        budget: dict. The shared budget (`BUDGET` with the `--set` overrides).
        best_loss: str. The loss of the `<method>/best` rows (a key of `LOSSES`).
        seed: int.
        dataset_options: dict or `None`. Options of the dataset loader.
        backbone_weights: str or `None`. Weights file the backbone starts from (the
            pretrained regime); not allowed for `defaults`, which sets nothing but the data.
    """
    common = {
        "dataset": dataset,
        "dataset_options": dict(dataset_options or {}),
        "epochs": budget["epochs"],
        "seed": seed,
        "eval_every": budget["epochs"],
    }
    if row == "defaults":
        if backbone_weights is not None:
            raise ValueError("The `defaults` row runs in the scratch regime only.")
        return {"method": "baseline", **common}
    config = {
        **common,
        "image_size": budget["image_size"],
        "backbone": {"name": budget["backbone"], "weights": backbone_weights},
        "batch_size": budget["batch_size"],
        "m_per_class": budget["m_per_class"],
        "optimizer": {"name": "adam", "learning_rate": budget["learning_rate"]},
    }
    method, variant = row.split("/")
    if method == "baseline":
        return {
            **config,
            "method": "baseline",
            "model": {"embedding_dim": budget["embedding_dim"]},
            "loss": LOSSES[variant],
        }
    model, paper_loss, options = METHODS[method]
    if method == "dcml":  # DCML sizes each learner; the others split one embedding
        model = {**model, "learner_dim": budget["embedding_dim"] // model["num_learners"]}
    else:
        model = {**model, "embedding_dim": budget["embedding_dim"]}
    if method == "dc" and budget["epochs"] > 1:
        # Algorithm 1 of the paper ends by merging the learners and fine-tuning the full
        # embedding on the entire dataset: here the budget's last epoch. Set explicitly (the
        # library's "auto" gives the same at 3 epochs) so each record names the epoch it used.
        options = {**options, "conquer_epoch": budget["epochs"] - 1, "conquer_sampling": "all"}
    options = {**options, **ABLATIONS.get(row, {})}
    loss = paper_loss if variant == "paper" else LOSSES[best_loss]
    return {**config, "method": method, "model": model, "loss": loss, "method_options": options}


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
        `(weights path, info dict)`; the info names the digest, classes, images and epochs.
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
            return path, json.load(f)

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
    row, splits, dataset, budget, best_loss, seed, output, dataset_options=None, weights=None
):
    from keras_dml.training import train

    config = keras_config(row, dataset, budget, best_loss, seed, dataset_options, weights)
    run_dir = os.path.join(output, row.replace("/", "_"), f"seed{seed}")
    if weights is not None:
        run_dir = os.path.join(output, "pretrained_rows", row.replace("/", "_"), f"seed{seed}")
    run = train(config, run_dir, verbose=0, splits=splits)
    with open(os.path.join(run_dir, "config.json")) as f:
        used = json.load(f)  # what the run fitted to the data (the `defaults` row sets little)
    settings = {
        "backbone": used["backbone"]["name"],
        "batch_size": used["batch_size"],
        "m_per_class": used["m_per_class"],
        "model": used["model"],
        "loss": used["loss"],
        "optimizer": used["optimizer"],
        "method_options": used.get("method_options", {}),
    }
    return run["metrics"], run["seconds"], settings


def run_pml(row, splits, budget, seed):
    import torch_reference

    from keras_dml import backbones
    from keras_dml.evaluation import evaluate

    size = budget["image_size"]
    backbone = backbones.get(budget["backbone"], input_shape=(size, size, 3))
    train, test = splits["train"], splits["test"]
    embeddings, seconds = torch_reference.train_and_embed(
        row.split("/")[1],
        backbone,
        _images(train, size),
        train.labels,
        _images(test, size),
        budget,
        seed,
    )
    return evaluate(embeddings, test.labels), seconds


def _images(data, size):
    """The evaluation-preprocessed images of an in-memory split, uint8-range floats."""
    batches = [x for x, _ in data.as_tf_dataset(training=False, batch_size=1024, image_size=size)]
    return np.concatenate([np.asarray(b) for b in batches])


def print_table(path):
    """Prints the mean over seeds of every row recorded in `path` (results.jsonl)."""
    rows = {}
    if not os.path.exists(path):
        raise SystemExit(
            f"error: no results at {path}; run some rows first (--rows ROW --output DIR) or "
            "copy benchmarks/results/accuracy_hangul.jsonl there as results.jsonl"
        )
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            rows.setdefault(table_key(record), []).append(record)
    keys = ("recall@1", "map@r", "r_precision", "nmi")
    print(f"{'row':<30} {'R@1':>6} {'MAP@R':>6} {'R-Prec':>6} {'NMI':>6} {'time':>6} seeds")
    for row, records in rows.items():
        means = [np.mean([r["metrics"][k] for r in records]) for k in keys]
        seconds = np.mean([r["seconds"] for r in records])
        seeds = ",".join(str(r["seed"]) for r in records)
        print(f"{row:<30} " + " ".join(f"{m:>6.3f}" for m in means) + f" {seconds:>5.0f}s {seeds}")


def main(argv=None):
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
    parser.add_argument("--list", action="store_true", help="list the rows and exit")
    parser.add_argument("--table", action="store_true", help="print the table and exit")
    args = parser.parse_args(argv)

    budget = dict(BUDGET)
    for item in args.set:
        key, value = item.split("=", 1)
        budget[key] = type(BUDGET[key])(value) if key in BUDGET else value
    dataset_options = {}
    for item in args.dataset_option:
        key, _, value = item.partition("=")
        try:
            dataset_options[key] = json.loads(value)
        except json.JSONDecodeError:
            dataset_options[key] = value  # a bare string, e.g. a folder
    names = row_names(args.best_loss)
    if args.list:
        print("\n".join(names))
        return
    results = os.path.join(args.output, "results.jsonl")
    if args.table:
        print_table(results)
        return
    patterns = args.rows.split(",")
    selected = [n for n in names if any(fnmatch.fnmatch(n, p) for p in patterns)]
    unknown = [p for p in patterns if not any(fnmatch.fnmatch(n, p) for n in names)]
    if unknown:
        parser.error(f"no row matches {unknown}; see --list")
    if args.regime == "pretrained":
        # PML's backbone is translated without weights, and `defaults` sets nothing but the data.
        skipped = [n for n in selected if n.startswith("pml/") or n == "defaults"]
        selected = [n for n in selected if n not in skipped]
        if skipped:
            print(f"[accuracy] scratch regime only, skipped: {', '.join(skipped)}", flush=True)
        if not selected:
            parser.error("no keras-dml row selected for --regime pretrained")

    from keras_dml.training import load_splits, resolve_config

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
    splits = {}
    for seed in [int(s) for s in args.seeds.split(",")]:
        for row in selected:
            config = resolve_config(
                keras_config("defaults", args.dataset, budget, None, seed, dataset_options)
            )
            if seed not in splits:
                splits[seed] = load_splits({**config, "image_size": budget["image_size"]})
            start = time.perf_counter()
            if row.startswith("pml/"):
                try:
                    metrics, seconds = run_pml(row, splits[seed], budget, seed)
                    settings = {"backbone": budget["backbone"], "recipe": row.split("/")[1]}
                except ImportError as error:
                    print(f"[accuracy] {row}: skipped ({error})", flush=True)
                    continue
            else:
                metrics, seconds, settings = run_keras(
                    row,
                    splits[seed],
                    args.dataset,
                    budget,
                    args.best_loss,
                    seed,
                    args.output,
                    dataset_options,
                    weights,
                )
            record = {
                "row": row,
                "seed": seed,
                "dataset": args.dataset,
                **({"dataset_options": dataset_options} if dataset_options else {}),
                **({"regime": args.regime, "pretrained": pretrained} if pretrained else {}),
                "budget": budget,
                "settings": settings,
                "metrics": {k: v if isinstance(v, str) else float(v) for k, v in metrics.items()},
                "seconds": float(seconds),
                "wall": time.perf_counter() - start,
            }
            with open(results, "a") as f:
                f.write(json.dumps(record) + "\n")
            m = record["metrics"]
            print(
                f"[accuracy] {table_key(record)} seed {seed}: R@1 {m['recall@1']:.3f} "
                f"MAP@R {m['map@r']:.3f} train {seconds:.0f}s",
                flush=True,
            )
    print_table(results)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
