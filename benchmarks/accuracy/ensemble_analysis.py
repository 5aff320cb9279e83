"""Why an ensemble wins or loses: per-learner quality and diversity of trained accuracy rows.

Reads the runs `benchmarks/accuracy/run.py` saved (`OUTPUT/<row>/seed<k>/model.keras`), embeds the
row's test split once, and prints, per row: the ensemble's R@1 and MAP@R, each learner's R@1 and
MAP@R on its own slice (L2-normalised), and the learners' classifier correlation (the mean Pearson
correlation of their pair similarity scores, BIER TPAMI Sec. 4.1). The baseline rows are the
control: their embedding is cut into the same number of equal slices, so an ensemble whose
learners are no better and no less correlated than arbitrary slices of a single embedding has
bought nothing with its structure.

Usage:
    python -m benchmarks.accuracy.ensemble_analysis --output runs/accuracy \
        --rows baseline/normalized_softmax,dc/best,abe/best,bier/best --seed 0
"""

import argparse
import json
import os

import numpy as np


def _learner_dims(model, slices, size):
    dims = tuple(int(d) for d in getattr(model, "learner_dims", None) or ())
    if len(dims) > 1:
        return dims
    if size % slices:
        raise ValueError(f"a {size}-d embedding does not cut into {slices} equal slices")
    return (size // slices,) * slices


def analyse(run_dir, slices, cache):
    """Diagnostics of one saved run; `cache` keeps the test split per (dataset, seed, size)."""
    import keras

    from keras_dml.evaluation import embed, evaluate
    from keras_dml.evaluation.ensemble_diagnostics import classifier_correlation
    from keras_dml.training import load_splits

    with open(os.path.join(run_dir, "config.json")) as f:
        config = json.load(f)
    key = (config["dataset"], config["seed"], config["image_size"])
    if key not in cache:
        cache[key] = load_splits(config)["test"]
    test = cache[key]
    model = keras.saving.load_model(os.path.join(run_dir, "model.keras"), safe_mode=True)
    embeddings, labels = embed(model, test, batch_size=512, verbose=False)
    dims = _learner_dims(model, slices, embeddings.shape[1])
    whole = evaluate(embeddings, labels, metrics=("recall", "map@r"), recall_at=(1,))
    learners = []
    for start, size in zip(np.cumsum((0,) + dims[:-1]), dims):
        part = embeddings[:, start : start + size]
        learners.append(evaluate(part, labels, metrics=("recall", "map@r"), recall_at=(1,)))
    correlation = classifier_correlation(embeddings, dims, max_pairs=200_000)["mean"]
    return {
        "learners": len(dims),
        "recall@1": float(whole["recall@1"]),
        "map@r": float(whole["map@r"]),
        "learner_recall@1": [float(m["recall@1"]) for m in learners],
        "learner_map@r": [float(m["map@r"]) for m in learners],
        "classifier_correlation": float(correlation),
    }


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--output", default="runs/accuracy", help="benchmarks.accuracy.run --output"
    )
    parser.add_argument("--rows", required=True, help="comma-separated row names")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--slices", type=int, default=4, help="equal slices of a single embedding (the control)"
    )
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    cache = {}
    records = []
    for row in args.rows.split(","):
        run_dir = os.path.join(args.output, row.replace("/", "_"), f"seed{args.seed}")
        if not os.path.exists(os.path.join(run_dir, "model.keras")):
            print(f"[ensemble_analysis] {row}: no model in {run_dir}, skipped", flush=True)
            continue
        record = {"row": row, "seed": args.seed, **analyse(run_dir, args.slices, cache)}
        records.append(record)
        with open(os.path.join(args.output, "ensemble_analysis.jsonl"), "a") as f:
            f.write(json.dumps(record) + "\n")
        print(json.dumps(record), flush=True)
    header = (
        f"{'row':<30} {'R@1':>6} {'MAP@R':>6} {'learner R@1':>18} {'learner MAP@R':>18} {'corr':>5}"
    )
    print(header)
    for r in records:
        lr, lm = r["learner_recall@1"], r["learner_map@r"]
        print(
            f"{r['row']:<30} {r['recall@1']:>6.3f} {r['map@r']:>6.3f} "
            f"{np.mean(lr):>6.3f} [{min(lr):.3f},{max(lr):.3f}] "
            f"{np.mean(lm):>6.3f} [{min(lm):.3f},{max(lm):.3f}] {r['classifier_correlation']:>5.2f}"
        )


if __name__ == "__main__":
    main()
