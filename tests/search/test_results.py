"""`search_result`: one result assembly for `EmbeddingIndex` and `ShardedIndex`."""

from types import SimpleNamespace

import numpy as np

from keras_dml.search import EmbeddingIndex, ShardedIndex
from keras_dml.search.results import search_result


def test_missing_rows_get_no_label_and_no_id():
    gallery = SimpleNamespace(labels=np.array([3, 4, 5]), ids=["a", "b", "c"], class_names=None)
    result = search_result(gallery, np.array([[2, -1], [0, 1]]), np.zeros((2, 2), np.float32))
    assert result.labels.tolist() == [[5, -1], [3, 4]]
    assert result.ids.tolist() == [["c", None], ["a", "b"]]
    unlabelled = SimpleNamespace(labels=None, ids=None, class_names=None)
    empty = search_result(unlabelled, np.array([[0]]), np.ones((1, 1), np.float32))
    assert empty.labels is None and empty.ids is None and empty.matched is None


def test_shards_give_the_same_labels_ids_and_names_as_one_index():
    x = np.random.default_rng(0).normal(size=(12, 4)).astype("float32")
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    labels, ids = np.arange(12) % 3, [f"img{i}.png" for i in range(12)]
    one = EmbeddingIndex.from_embeddings(x, labels=labels, ids=ids)
    parts = [
        EmbeddingIndex.from_embeddings(x[a:b], labels=labels[a:b], ids=ids[a:b])
        for a, b in ((0, 5), (5, 12))
    ]
    for index in [one, *parts]:
        index.class_names = ["cat", "dog", "owl"]
    single, sharded = one.search(x[:4], k=3), ShardedIndex(parts).search(x[:4], k=3)
    np.testing.assert_array_equal(sharded.indices, single.indices)
    assert sharded.ids.tolist() == single.ids.tolist()
    assert sharded.labels.tolist() == single.labels.tolist()
    assert sharded.label_names() == single.label_names()
    assert sharded.ids[:, 0].tolist() == [f"img{i}.png" for i in range(4)]
    assert sharded.class_names == ["cat", "dog", "owl"]
    assert [row[0] for row in sharded.label_names()] == ["cat", "dog", "owl", "cat"]
