"""`benchmarks.speed.reranking`: evaluate without and with each re-ranking, side by side."""

import json

from keras_dml.evaluation import evaluate
from tests.support.helpers import benchmark_script


def test_reranking_benchmark_records_each_method_next_to_none(tmp_path):
    module = benchmark_script("speed.reranking")
    output = tmp_path / "reranking.json"
    module.main(
        ["--num-samples", "1200", "--dim", "16", "--methods", "aqe,dba", "--output", str(output)]
    )
    record = json.loads(output.read_text())
    assert [row["rerank"] for row in record["rows"]] == [
        "none",
        "aqe(top_n=10)",
        "dba(top_n=10, alpha=3)",
    ]
    embeddings, labels = benchmark_script("speed.evaluation").sop_like_data(
        1200, 1200 * 11316 // 60502, 16
    )
    want = evaluate(embeddings, labels, metrics=("recall", "map@r"), rerank="dba")
    assert record["rows"][2]["map@r"] == round(want["map@r"], 4)
    assert all(row["seconds"] > 0 and row["peak_rss_mb"] > 0 for row in record["rows"])
