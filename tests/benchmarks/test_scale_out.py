"""`benchmarks.scale_out`: both scripts at a tiny size, and the site quotes the lines their
committed records print."""

import json
import os

import pytest

from tests.stores.gallery import skip_without
from tests.support.helpers import benchmark_script
from tests.support.paths import REPO_ROOT

RECORDS = {
    "scale_out.beam_embed": "scale_out_beam_embed.json",
    "scale_out.milvus_search": "scale_out_milvus_1000000.json",
    "scale_out.memory_loss": "scale_out_memory_loss.json",
}


@pytest.mark.parametrize("script", sorted(RECORDS))
def test_the_site_quotes_each_record_as_its_script_prints_it(script):
    with open(os.path.join(REPO_ROOT, "benchmarks", "results", RECORDS[script])) as f:
        record = json.load(f)
    with open(os.path.join(REPO_ROOT, "docs", "scale_out.md")) as f:
        page = f.read()
    assert record["command"] in page
    for line in benchmark_script(script).summary_lines(record):
        assert line in page, line


TINY = {
    "scale_out.milvus_search": (
        ("pymilvus", "faiss"),
        ["--num-samples", "3000", "--num-queries", "50"],
    ),
    "scale_out.beam_embed": (("apache_beam", "pymilvus"), ["--num-images", "40", "--classes", "4"]),
    "scale_out.memory_loss": (
        (),
        [
            "--sizes",
            "256",
            "--batch-size",
            "16",
            "--warmup",
            "1",
            "--steps",
            "1",
            "--backends",
            "tensorflow",
        ],
    ),
}


@pytest.mark.parametrize("script", sorted(TINY))
def test_each_script_at_a_tiny_size(script, tmp_path):
    modules, argv = TINY[script]
    skip_without(*modules)
    measured = benchmark_script(script).main([*argv, "--record", str(tmp_path / "r.json")])[
        "measured"
    ]
    if script == "scale_out.memory_loss":  # the plain loss and the memory
        for rows in measured["backends"].values():
            assert set(rows) == {"plain", "256"} and rows["256"]["step_seconds"] > 0
    elif script == "scale_out.milvus_search":  # exact top-10 of clustered data: all found
        assert measured["milvus_search"]["recall"] == measured["faiss_flat_search"]["recall"] == 1
    else:  # every image embedded three ways
        rows = [measured[key]["rows"] for key in ("embed", "beam_milvus", "beam_parquet")]
        assert rows == [40, 40, 40]
