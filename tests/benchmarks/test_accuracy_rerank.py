"""`benchmarks.accuracy.run --rerank`: re-ranked metrics recorded next to each row's, and tabled."""

import json
import os

import numpy as np
import pytest

from keras_dml.evaluation import evaluate
from tests.support.helpers import benchmark_script


def embeddings(seed=0):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(30), 6)
    x = rng.normal(size=(30, 8))[labels] + 0.8 * rng.normal(size=(180, 8))
    return x.astype("float32"), labels


def test_rerank_metrics_are_evaluate_with_each_method_in_both_protocols():
    module = benchmark_script("accuracy.run")
    x, labels = embeddings()
    found = module.rerank_metrics((x, labels), ["aqe", "k_reciprocal"])
    for method in ("aqe", "k_reciprocal"):
        want = evaluate(x, labels, metrics=("recall", "map@r", "r_precision"), rerank=method)
        assert found[method] == {k: v for k, v in want.items() if k != "rerank"}
    gallery = (x[::2], labels[::2], x[1::2], labels[1::2])
    found = module.rerank_metrics(gallery, ["dba"])
    want = evaluate(*gallery, metrics=("recall", "map@r", "r_precision"), rerank="dba")
    assert found["dba"]["map@r"] == want["map@r"]
    assert found["dba"]["map@r"] != evaluate(*gallery, metrics=("map@r",))["map@r"]


def test_table_shows_each_rows_reranked_metrics_and_their_change(capsys, tmp_path):
    records = []
    for seed, (plain, reranked) in enumerate([(0.5, 0.6), (0.7, 0.9)]):
        metrics = {"recall@1": plain, "map@r": plain / 2, "r_precision": 0.5, "nmi": 0.5}
        rerank = {"k_reciprocal": {"recall@1": reranked, "map@r": reranked / 2}}
        records.append(
            {
                "row": "baseline/margin",
                "seed": seed,
                "settings": {"loss": {"name": "margin"}},
                "metrics": metrics,
                "metrics_rerank": rerank,
                "seconds": 1.0,
            }
        )
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    benchmark_script("accuracy.table").print_table(str(path))
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if "k_reciprocal" in line).split()
    # Means over the two seeds: R@1 0.75 (plain 0.6), MAP@R 0.375 (plain 0.3).
    assert row == ["baseline/margin", "k_reciprocal", "0.750", "0.375", "+0.150", "+0.075", "0,1"]


def test_an_unknown_rerank_name_is_refused_before_training(tmp_path, capsys):
    module = benchmark_script("accuracy.run")
    with pytest.raises(SystemExit):
        module.main(["--rows", "defaults", "--rerank", "qe", "--output", str(tmp_path)])
    assert "Did you mean 'aqe'?" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "results.jsonl")


# The end-to-end run with --rerank is part of the slow test of tests/benchmarks/test_accuracy.py
# (one tiny training serves both).
