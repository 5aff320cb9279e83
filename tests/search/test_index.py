"""`EmbeddingIndex`: every backend against a naive exact search, shards, recall, errors."""

import numpy as np
import pytest

from keras_dml.search import EmbeddingIndex, ShardedIndex
from keras_dml.search.exact_topk import exact_search
from keras_dml.utils import is_available

needs_faiss = pytest.mark.skipif(not is_available("faiss"), reason="faiss missing")


def naive_topk(queries, gallery, k, exclude=None):
    """Sorted by (-score, index) with plain Python; `exclude[i]` removed from query i's list."""
    out = []
    for i, query in enumerate(queries):
        scores = [float(np.dot(query, row)) for row in gallery]
        order = sorted(range(len(gallery)), key=lambda j: (-scores[j], j))
        if exclude is not None:
            order = [j for j in order if j != exclude[i]]
        out.append(order[:k])
    return np.array(out)


def _unit(rng, n, d=16):
    x = rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _tied_data():
    """Small integer vectors: every inner product is exact in float32, so ties are real."""
    rng = np.random.default_rng(3)
    x = rng.integers(-1, 2, size=(60, 4)).astype(np.float32)
    return np.concatenate([x, x[:20]]), rng.integers(-1, 2, size=(7, 4)).astype(np.float32)


@pytest.mark.parametrize("tile_size", [None, 7])
def test_exact_backend_matches_naive_with_ties(tile_size):
    gallery, queries = _tied_data()
    index = EmbeddingIndex.from_embeddings(gallery, tile_size=tile_size, chunk_size=3)
    for k in (1, 5, 40):
        result = index.search(queries, k=k)
        np.testing.assert_array_equal(result.indices, naive_topk(queries, gallery, k))
        np.testing.assert_array_equal(
            result.scores, np.take_along_axis(queries @ gallery.T, result.indices, 1)
        )


def test_exact_tiled_streaming_equals_full_rows():
    """Tiles of references with a running top-k give the full-row result, ties by index."""
    gallery, _ = _tied_data()
    full = exact_search(gallery, gallery, 9, exclude_self=True)
    for tile in (1, 5, 13, 79):
        tiled = exact_search(gallery, gallery, 9, exclude_self=True, chunk_size=4, tile_size=tile)
        np.testing.assert_array_equal(tiled[0], full[0])
    expected = naive_topk(gallery, gallery, 9, exclude=np.arange(len(gallery)))
    np.testing.assert_array_equal(full[0], expected)


@needs_faiss
def test_flat_backend_matches_exact_with_ties():
    gallery, queries = _tied_data()
    flat = EmbeddingIndex.from_embeddings(gallery, backend="flat").search(queries, k=12)
    exact = EmbeddingIndex.from_embeddings(gallery).search(queries, k=12)
    np.testing.assert_array_equal(flat.scores, exact.scores)
    for row in range(len(queries)):
        # Which of the references tied at the 12th score faiss keeps is its choice; the rest
        # (strictly better than the 12th) must be identical and in index order among ties.
        better = exact.scores[row] > exact.scores[row, -1]
        np.testing.assert_array_equal(flat.indices[row, better], exact.indices[row, better])


@needs_faiss
@pytest.mark.parametrize("backend, options", [("ivf", {"nlist": 8, "nprobe": 8}), ("hnsw", {})])
def test_approximate_backends_exhaustive_settings_are_exact(backend, options):
    rng = np.random.default_rng(0)
    gallery, queries = _unit(rng, 500), _unit(rng, 20)
    result = EmbeddingIndex.from_embeddings(gallery, backend=backend, **options).search(queries, 10)
    np.testing.assert_array_equal(result.indices, naive_topk(queries, gallery, 10))


@needs_faiss
def test_measure_recall_reports_the_approximation():
    rng = np.random.default_rng(1)
    gallery = _unit(rng, 2000, 32)
    index = EmbeddingIndex.from_embeddings(gallery, backend="ivf", nlist=40, nprobe=1)
    recall = index.measure_recall(sample=200, k=10, seed=0)
    # The same number by hand: the IVF lists against the naive exact lists, self excluded.
    rows = np.sort(np.random.default_rng(0).choice(2000, 200, replace=False))
    approx = index.search_embeddings(gallery[rows], 11)[0]
    exact = naive_topk(gallery[rows], gallery, 10, exclude=rows)
    found = []
    for i, row in enumerate(rows):
        kept = [j for j in approx[i] if j != row][:10]
        found.append(len(set(kept) & set(exact[i])))
    assert recall == pytest.approx(np.sum(found) / exact.size)
    assert 0.0 < recall < 0.95, "nprobe=1 of 40 lists should miss neighbours"
    exhaustive = EmbeddingIndex.from_embeddings(gallery, backend="ivf", nlist=40, nprobe=40)
    assert exhaustive.measure_recall(sample=200, k=10) == 1.0
    assert EmbeddingIndex.from_embeddings(gallery).measure_recall(sample=50) == 1.0


def test_labels_ids_and_metadata_in_results():
    rng = np.random.default_rng(2)
    gallery = _unit(rng, 30)
    index = EmbeddingIndex.from_embeddings(
        gallery, labels=np.arange(30) % 3, ids=[f"img{i}.png" for i in range(30)]
    )
    index.class_names = ["cat", "dog", "owl"]
    result = index.search(gallery[[4, 8]], k=3)
    assert result.indices[:, 0].tolist() == [4, 8]
    assert result.labels[:, 0].tolist() == [1, 2]
    assert result.ids[:, 0].tolist() == ["img4.png", "img8.png"]
    assert result.label_names()[0][0] == "dog"


def test_per_learner_search_equals_searching_the_slice():
    rng = np.random.default_rng(4)
    slices = [(0, 8), (8, 24)]
    gallery = np.concatenate([_unit(rng, 100, 8), _unit(rng, 100, 16)], axis=1)
    queries = np.concatenate([_unit(rng, 5, 8), _unit(rng, 5, 16)], axis=1)
    index = EmbeddingIndex.from_embeddings(gallery, learner_slices=slices)
    for learner, (a, b) in enumerate(slices):
        result = index.search(queries, k=7, learner=learner)
        np.testing.assert_array_equal(
            result.indices, naive_topk(queries[:, a:b], gallery[:, a:b], 7)
        )
    whole = index.search(queries, k=7)
    assert not np.array_equal(whole.indices, index.search(queries, k=7, learner=0).indices)
    with pytest.raises(ValueError, match="learner"):
        index.search(queries, k=3, learner=2)
    with pytest.raises(ValueError, match="no learner slices"):
        EmbeddingIndex.from_embeddings(gallery).search(queries, k=3, learner=0)


@pytest.mark.parametrize(
    "backend",
    ["exact", pytest.param("flat", marks=needs_faiss), pytest.param("hnsw", marks=needs_faiss)],
)
def test_shard_merge_equals_single_index(backend):
    gallery, queries = _tied_data()
    single = EmbeddingIndex.from_embeddings(gallery, backend=backend, labels=np.arange(80) % 5)
    parts = [
        EmbeddingIndex.from_embeddings(gallery[a:b], backend=backend, labels=np.arange(a, b) % 5)
        for a, b in ((0, 13), (13, 50), (50, 80))
    ]
    sharded = ShardedIndex(parts)
    for k in (1, 6, 20):
        one, many = single.search(queries, k=k), sharded.search(queries, k=k)
        np.testing.assert_array_equal(many.scores, one.scores)
        if backend == "exact":
            np.testing.assert_array_equal(many.indices, one.indices)
            np.testing.assert_array_equal(many.labels, one.labels)
    # Self-excluded search over shards (what evaluation does).
    merged = np.concatenate([i for _, i, _ in sharded.iter_search(gallery, 4, True, chunk_size=9)])
    if backend == "exact":
        expected = naive_topk(gallery, gallery, 4, exclude=np.arange(80))
        np.testing.assert_array_equal(merged, expected)


def test_argument_errors():
    rng = np.random.default_rng(8)
    gallery = _unit(rng, 10)
    index = EmbeddingIndex.from_embeddings(gallery)
    with pytest.raises(ValueError, match=r"Embedding size mismatch.*16-d.*8-d"):
        index.add(_unit(rng, 3, 8))
    with pytest.raises(ValueError, match=r"Query embeddings must be \[Q, 16\]"):
        index.search(_unit(rng, 2, 8), k=2)
    with pytest.raises(ValueError, match=r"`k` must be an integer in \[1, 10\].*k=11"):
        index.search(gallery[:1], k=11)
    with pytest.raises(ValueError, match="The index is empty"):
        EmbeddingIndex().search(gallery[:1], k=1)
    with pytest.raises(ValueError, match="empty"):
        EmbeddingIndex().add(np.zeros((0, 16), np.float32))
    with pytest.raises(ValueError, match="`labels` must have one entry per gallery item"):
        EmbeddingIndex().add(gallery, labels=[0, 1])
    with pytest.raises(ValueError, match="no model"):
        index.search(np.zeros((1, 8, 8, 3)), k=1)
    with pytest.raises(ValueError, match="backend"):
        EmbeddingIndex(backend="annoy")


def test_missing_faiss_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "faiss", None)
    for backend in ("flat", "ivf", "hnsw"):
        with pytest.raises(ImportError, match=r'pip install "keras-dml\[faiss\]"'):
            EmbeddingIndex(backend=backend)
    # The exact NumPy backend needs no faiss.
    rng = np.random.default_rng(9)
    gallery = _unit(rng, 12)
    assert EmbeddingIndex.from_embeddings(gallery).search(gallery[:2], k=1).indices.tolist() == [
        [0],
        [1],
    ]


@needs_faiss
def test_gpu_is_detected_and_never_required(monkeypatch, tmp_path):
    """With faiss-gpu seeing a GPU, flat and IVF indexes move to it (HNSW has no GPU version);
    without one, use_gpu=True is an error and "auto" stays on the CPU."""
    import faiss

    rng = np.random.default_rng(10)
    gallery = _unit(rng, 200)
    if not hasattr(faiss, "StandardGpuResources"):
        with pytest.raises(ValueError, match=r"use_gpu=True needs faiss-gpu"):
            EmbeddingIndex(backend="flat", use_gpu=True)
    moved = []
    monkeypatch.setattr(faiss, "StandardGpuResources", lambda: "resources", raising=False)
    monkeypatch.setattr(faiss, "get_num_gpus", lambda: 1, raising=False)
    monkeypatch.setattr(
        faiss,
        "index_cpu_to_gpu",
        lambda res, dev, idx: moved.append(type(idx).__name__) or idx,
        raising=False,
    )
    monkeypatch.setattr(faiss, "index_gpu_to_cpu", lambda idx: idx, raising=False)
    for backend in ("flat", "ivf", "hnsw"):
        options = {"nlist": 4} if backend == "ivf" else {}
        index = EmbeddingIndex.from_embeddings(gallery, backend=backend, **options)
        index.search(gallery[:2], k=3)
        assert index.backend.on_gpu == (backend != "hnsw")
    assert moved == ["IndexFlatIP", "IndexIVFFlat"]
    off = EmbeddingIndex.from_embeddings(gallery, backend="flat", use_gpu=False)
    off.search(gallery[:2], k=3)
    assert moved == ["IndexFlatIP", "IndexIVFFlat"] and not off.backend.on_gpu
    off.save(tmp_path / "idx")  # use_gpu is a property of the machine: not saved
    assert "use_gpu" not in (tmp_path / "idx" / "index.json").read_text()
