"""Evaluation at scale: index choices, shards, tiled exact search, approximation report, memmap."""

import keras
import numpy as np
import pytest

from keras_dml.evaluation import embed, evaluate
from keras_dml.search import EmbeddingIndex, ShardedIndex
from keras_dml.utils import is_available
from tests.evaluation.test_metrics import _assert_matches, _data, naive_retrieval

needs_faiss = pytest.mark.skipif(not is_available("faiss"), reason="faiss missing")
RETRIEVAL = ("recall", "map@r", "r_precision")


@pytest.mark.parametrize(
    "index, shards",
    [
        ("exact", 1),
        ("exact", 3),
        pytest.param("flat", 1, marks=needs_faiss),
        pytest.param("flat", 2, marks=needs_faiss),
    ],
)
def test_exact_indexes_and_shards_match_naive(index, shards):
    x, labels = _data(seed=11, n=150, classes=20)
    recall_at = (1, 2, 4, 8, 16)
    result = evaluate(x, labels, recall_at=recall_at, metrics=RETRIEVAL, index=index, shards=shards)
    _assert_matches(result, naive_retrieval(x, labels, recall_at=recall_at))
    assert not any(key.startswith("approx_") for key in result)


def test_tiled_exact_search_matches_naive_with_ties(monkeypatch):
    """Tiles of references + a running top-k (the large-gallery path) give the exact metrics."""
    from keras_dml.search import numpy_backend

    tiles = []
    original = numpy_backend.search_chunk

    def recording(*args, **kwargs):
        tiles.append(args[5])
        return original(*args, **kwargs)

    monkeypatch.setattr(numpy_backend, "search_chunk", recording)
    rng = np.random.default_rng(12)
    x = rng.integers(-2, 3, size=(90, 4)).astype(np.float32)
    labels = rng.integers(0, 6, size=90)
    x, labels = np.concatenate([x, x[:30]]), np.concatenate([labels, labels[:30]])
    template = EmbeddingIndex(tile_size=17)
    result = evaluate(
        x, labels, recall_at=(1, 3, 5), metrics=RETRIEVAL, normalize=False, index=template
    )
    _assert_matches(result, naive_retrieval(x, labels, recall_at=(1, 3, 5), normalize=False))
    assert tiles and set(tiles) == {17}, "the tiled search path must have run"


def test_query_gallery_with_a_prebuilt_index_object():
    gallery, gallery_labels = _data(seed=13, n=80, classes=10)
    queries, query_labels = _data(seed=14, n=25, classes=10)
    unit = gallery / np.linalg.norm(gallery, axis=1, keepdims=True)
    prebuilt = ShardedIndex([EmbeddingIndex.from_embeddings(p) for p in np.array_split(unit, 3)])
    result = evaluate(gallery, gallery_labels, queries, query_labels, index=prebuilt)
    _assert_matches(result, naive_retrieval(gallery, gallery_labels, queries, query_labels))
    with pytest.raises(ValueError, match="holds 40 x 16 vectors but the gallery is 80 x 16"):
        evaluate(gallery, gallery_labels, index=EmbeddingIndex.from_embeddings(unit[:40]))


@needs_faiss
def test_approximate_index_reports_its_error_against_exact():
    x, labels = _data(seed=15, n=600, classes=30, dim=16, noise=1.5)
    exact = evaluate(x, labels, recall_at=(1, 4), metrics=RETRIEVAL)
    coarse = EmbeddingIndex(backend="ivf", nlist=12, nprobe=1)
    approx = evaluate(
        x, labels, recall_at=(1, 4), metrics=RETRIEVAL, index=coarse, approx_sample=600
    )
    assert approx["approx_sample_size"] == 600
    # With the sample = every query, the reported error is the full metric difference.
    for key in ("recall@1", "recall@4", "map@r", "r_precision"):
        assert approx[f"approx_error_{key}"] == pytest.approx(approx[key] - exact[key], abs=1e-12)
    assert approx["approx_neighbor_recall"] < 0.9 and approx["approx_neighbor_k"] >= 4
    assert approx["recall@4"] < exact["recall@4"]
    exhaustive = evaluate(
        x, labels, recall_at=(1, 4), metrics=RETRIEVAL, index="hnsw", approx_sample=100
    )
    assert exhaustive["approx_sample_size"] == 100
    assert 0.0 <= exhaustive["approx_neighbor_recall"] <= 1.0


def test_index_argument_errors():
    x, labels = _data(n=20)
    with pytest.raises(ValueError, match="`index` must be one of"):
        evaluate(x, labels, index="annoy")
    with pytest.raises(ValueError, match=r"`shards` must be an integer in \[1, 20\]"):
        evaluate(x, labels, shards=0)


def test_memmap_embed_equals_in_memory(tmp_path):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4)])
    x = np.random.default_rng(16).normal(size=(23, 6)).astype(np.float32)
    labels = np.arange(23) % 5
    in_memory, in_labels = embed(model, (x, labels), batch_size=5, verbose=False)
    mapped, mapped_labels = embed(
        model, (x, labels), batch_size=5, verbose=False, out_path=str(tmp_path / "e.npy")
    )
    assert isinstance(mapped, np.memmap) and mapped.filename == str(tmp_path / "e.npy")
    np.testing.assert_array_equal(mapped, in_memory)
    np.testing.assert_array_equal(mapped_labels, in_labels)
    np.testing.assert_array_equal(np.load(tmp_path / "e.npy"), in_memory)
    # A tf.data pipeline of unknown length goes through a temporary file.
    import tensorflow as tf

    dataset = tf.data.Dataset.from_tensor_slices((x, labels)).batch(4).filter(lambda a, b: True)
    streamed, _ = embed(model, dataset, verbose=False, out_path=str(tmp_path / "f.npy"))
    np.testing.assert_array_equal(streamed, in_memory)
    assert not (tmp_path / "f.npy.part").exists()
    assert evaluate(mapped, labels) == evaluate(in_memory, labels)
    with pytest.raises(ValueError, match=r"must end with \.npy"):
        embed(model, x, verbose=False, out_path=str(tmp_path / "e.bin"))


@needs_faiss
def test_scale_benchmark_runs_small(capsys, tmp_path):
    """The README's scale benchmark command, at a size that runs in seconds."""
    import importlib

    pytest.importorskip("psutil")
    module = importlib.import_module("benchmarks.speed.evaluation_scale")
    record = str(tmp_path / "record.json")  # never benchmarks/results/, the repository's records
    arguments = ["--num-samples", "3000", "--tile-size", "1024", "--approximate", "ivf,hnsw"]
    module.main([*arguments, "--record", record])
    out = capsys.readouterr().out
    assert "compute bound (matmul only, blocks 32768 x 1024)" in out
    assert "x the compute bound" in out and "peak RSS" in out
    assert "approx_neighbor_recall" in out and out.count("approx_error_map@r") == 2


@needs_faiss
def test_scale_benchmark_query_sample_runs_small(capsys, tmp_path):
    """`--num-queries`: the first rows query the others; the all-rows cost is extrapolated."""
    import importlib

    pytest.importorskip("psutil")
    module = importlib.import_module("benchmarks.speed.evaluation_scale")
    module.main(
        [
            "--num-samples",
            "3000",
            "--num-queries",
            "500",
            "--tile-size",
            "1024",
            "--approximate",
            "",
            "--record",
            str(tmp_path / "record.json"),
        ]
    )
    out = capsys.readouterr().out
    # 3000^2 / (500 * 2500) = 7.2 times the measured work.
    assert "500 queries against the other 2500 rows" in out and "7.2x this work" in out
    assert "all-rows run, extrapolated" in out and "x the compute bound" in out
