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

Each finished run is appended to `OUTPUT/results.jsonl`, so rows can be run in several
invocations (`--rows`) and the table (`--table`) aggregates every result found: the mean over
seeds, and the number of seeds.

Usage:
    python benchmarks/accuracy.py --list
    python benchmarks/accuracy.py --rows defaults,baseline/normalized_softmax,pml/proxy_anchor
    python benchmarks/accuracy.py --table
"""

import argparse
import fnmatch
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

PML_RECIPES = ("normalized_softmax", "proxy_anchor", "multi_similarity", "margin", "arcface")


def row_names(best_loss):
    names = ["defaults"] + [f"baseline/{loss}" for loss in LOSSES]
    for method in METHODS:
        names += [f"{method}/paper", f"{method}/best"]
        names += [row for row in ABLATIONS if row.startswith(f"{method}/")]
    names += [f"pml/{recipe}" for recipe in PML_RECIPES]
    return names


def keras_config(row, dataset, budget, best_loss, seed):
    """The run configuration of a keras-dml row."""
    common = {
        "dataset": dataset,
        "epochs": budget["epochs"],
        "seed": seed,
        "eval_every": budget["epochs"],
    }
    if row == "defaults":
        return {"method": "baseline", **common}
    config = {
        **common,
        "image_size": budget["image_size"],
        "backbone": {"name": budget["backbone"]},
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


def run_keras(row, splits, dataset, budget, best_loss, seed, output):
    from keras_dml.training import train

    config = keras_config(row, dataset, budget, best_loss, seed)
    run_dir = os.path.join(output, row.replace("/", "_"), f"seed{seed}")
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
            rows.setdefault(record["row"], []).append(record)
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
    parser.add_argument("--list", action="store_true", help="list the rows and exit")
    parser.add_argument("--table", action="store_true", help="print the table and exit")
    args = parser.parse_args(argv)

    budget = dict(BUDGET)
    for item in args.set:
        key, value = item.split("=", 1)
        budget[key] = type(BUDGET[key])(value) if key in BUDGET else value
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

    from keras_dml.training import load_splits, resolve_config

    os.makedirs(args.output, exist_ok=True)
    print(
        f"[accuracy] {platform.node()} {os.cpu_count()} cores, load {os.getloadavg()}, "
        f"budget {budget}",
        flush=True,
    )
    splits = {}
    for seed in [int(s) for s in args.seeds.split(",")]:
        for row in selected:
            config = resolve_config(keras_config("defaults", args.dataset, budget, None, seed))
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
                    row, splits[seed], args.dataset, budget, args.best_loss, seed, args.output
                )
            record = {
                "row": row,
                "seed": seed,
                "dataset": args.dataset,
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
                f"[accuracy] {row} seed {seed}: R@1 {m['recall@1']:.3f} MAP@R {m['map@r']:.3f} "
                f"train {seconds:.0f}s",
                flush=True,
            )
    print_table(results)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
