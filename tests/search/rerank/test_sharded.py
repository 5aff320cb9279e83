"""Re-ranking over a `ShardedIndex`: the same lists and scores as over one index of its rows."""

import numpy as np
import pytest

from keras_dml.search import EmbeddingIndex, ShardedIndex
from tests.support.rerank_reference import normalise

SPECS = [
    {"name": "aqe", "top_n": 3},
    {"name": "alpha_qe", "top_n": 4, "alpha": 3},
    {"name": "dba", "top_n": 2},
    {"name": "k_reciprocal", "k1": 6, "k2": 3, "candidates": 20},
]


def clustered(count, seed, dim=8, classes=5):
    rng = np.random.default_rng(seed)
    centres = np.random.default_rng(99).normal(size=(classes, dim))
    labels = rng.integers(0, classes, count)
    return normalise(centres[labels] + 0.7 * rng.normal(size=(count, dim))).astype(np.float32)


GALLERY = clustered(36, seed=0)
QUERIES = clustered(4, seed=1)


def shards():
    return ShardedIndex(
        [EmbeddingIndex.from_embeddings(part) for part in np.split(GALLERY, [10, 25])]
    )


@pytest.mark.parametrize("spec", SPECS, ids=[s["name"] for s in SPECS])
def test_sharded_rerank_equals_one_index(spec):
    one = EmbeddingIndex.from_embeddings(GALLERY).search(QUERIES, k=8, rerank=spec)
    split = shards().search(QUERIES, k=8, rerank=spec)
    plain = shards().search(QUERIES, k=8)
    np.testing.assert_array_equal(split.indices, one.indices)
    np.testing.assert_allclose(split.scores, one.scores, rtol=1e-5, atol=1e-6)
    # the re-ranking did something here: not the plain order and scores
    assert not np.allclose(split.scores, plain.scores)


def test_sharded_rerank_refuses_a_learner_slice():
    with pytest.raises(ValueError, match="rerank` works on the whole embedding"):
        shards().search(QUERIES, k=3, learner=0, rerank="aqe")


def test_sharded_rerank_prepares_the_gallery_once():
    index = shards()
    index.search(QUERIES, k=3, rerank={"name": "dba", "top_n": 2})
    prepared = next(iter(index._rerank_cache.values()))
    index.search(QUERIES[:1], k=3, rerank={"name": "dba", "top_n": 2})
    assert next(iter(index._rerank_cache.values())) is prepared
