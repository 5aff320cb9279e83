"""`EmbeddingIndex` storage: save / load round trips (exact and faiss backends), shards from
folders, corrupted or mismatched folders, re-saving over its own folder."""

import json

import numpy as np
import pytest

from keras_dml.search import EmbeddingIndex, IndexFormatError, ShardedIndex
from keras_dml.utils import is_available

needs_faiss = pytest.mark.skipif(not is_available("faiss"), reason="faiss missing")


def _unit(rng, n, d=16):
    x = rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_save_load_round_trip_and_shards_from_folders(tmp_path):
    rng = np.random.default_rng(5)
    gallery = _unit(rng, 50)
    index = EmbeddingIndex.from_embeddings(
        gallery,
        labels=np.arange(50) % 4,
        ids=[f"p{i}" for i in range(50)],
        learner_slices=[(0, 8), (8, 16)],
    )
    index.class_names = ["a", "b", "c", "d"]
    index.calibrate(target_precision=0.5)
    index.save(tmp_path / "idx")
    loaded = EmbeddingIndex.load(tmp_path / "idx")
    assert isinstance(loaded.embeddings, np.memmap)
    before, after = index.search(gallery[:5], k=4), loaded.search(gallery[:5], k=4)
    np.testing.assert_array_equal(after.indices, before.indices)
    np.testing.assert_array_equal(after.scores, before.scores)
    assert (
        after.ids.tolist() == before.ids.tolist()
        and after.labels.tolist() == before.labels.tolist()
    )
    assert loaded.class_names == index.class_names and loaded.threshold == index.threshold
    assert [tuple(s) for s in loaded.learner_slices] == [(0, 8), (8, 16)]
    EmbeddingIndex.from_embeddings(gallery[:20]).save(tmp_path / "s0")
    EmbeddingIndex.from_embeddings(gallery[20:]).save(tmp_path / "s1")
    sharded = ShardedIndex([tmp_path / "s0", tmp_path / "s1"])
    np.testing.assert_array_equal(sharded.search(gallery[:5], k=4).indices, before.indices)


@needs_faiss
@pytest.mark.parametrize("backend", ["flat", "ivf", "hnsw"])
def test_faiss_index_round_trip(tmp_path, backend):
    rng = np.random.default_rng(6)
    gallery = _unit(rng, 400)
    index = (
        EmbeddingIndex.from_embeddings(gallery, backend=backend, nlist=4, nprobe=2)
        if backend == "ivf"
        else EmbeddingIndex.from_embeddings(gallery, backend=backend)
    )
    before = index.search(gallery[:10], k=5)
    index.save(tmp_path / "idx")
    assert (tmp_path / "idx" / "faiss.index").is_file()
    loaded = EmbeddingIndex.load(tmp_path / "idx")
    after = loaded.search(gallery[:10], k=5)
    np.testing.assert_array_equal(after.indices, before.indices)
    if backend == "ivf":
        assert loaded.backend.index.nprobe == 2


def test_load_refuses_corrupted_or_mismatched_folders(tmp_path):
    rng = np.random.default_rng(7)
    gallery = _unit(rng, 30)
    folder = tmp_path / "idx"
    EmbeddingIndex.from_embeddings(gallery, labels=np.arange(30)).save(folder)
    with pytest.raises(IndexFormatError, match="not a saved keras-dml index"):
        EmbeddingIndex.load(tmp_path)
    data = bytearray((folder / "embeddings.npy").read_bytes())
    data[-3] ^= 0xFF  # same size, one byte flipped
    (folder / "embeddings.npy").write_bytes(bytes(data))
    with pytest.raises(IndexFormatError, match="corrupted"):
        EmbeddingIndex.load(folder)
    (folder / "embeddings.npy").write_bytes(bytes(data[:-8]))
    with pytest.raises(IndexFormatError, match="truncated"):
        EmbeddingIndex.load(folder)
    EmbeddingIndex.from_embeddings(gallery, labels=np.arange(30)).save(folder)
    (folder / "labels.npy").unlink()
    with pytest.raises(IndexFormatError, match="missing"):
        EmbeddingIndex.load(folder)
    EmbeddingIndex.from_embeddings(gallery).save(folder)
    meta = json.loads((folder / "index.json").read_text())
    meta["dim"] = 8
    (folder / "index.json").write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match=r"metadata says float32 \(30, 8\)"):
        EmbeddingIndex.load(folder)
    meta["version"] = 99
    (folder / "index.json").write_text(json.dumps(meta))
    with pytest.raises(IndexFormatError, match="version 99"):
        EmbeddingIndex.load(folder)


def test_resave_over_own_folder_and_nan_rows(tmp_path):
    rng = np.random.default_rng(11)
    gallery = _unit(rng, 40)
    EmbeddingIndex.from_embeddings(gallery, labels=np.arange(40) % 4).save(tmp_path / "idx")
    loaded = EmbeddingIndex.load(tmp_path / "idx")  # memory-mapped from that folder
    loaded.calibrate(target_precision=0.25)
    loaded.save(tmp_path / "idx")
    again = EmbeddingIndex.load(tmp_path / "idx")
    np.testing.assert_array_equal(again.embeddings, gallery)
    assert again.threshold == loaded.threshold
    bad = gallery.copy()
    bad[33, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or Inf values .from row 33"):
        EmbeddingIndex.from_embeddings(bad)
