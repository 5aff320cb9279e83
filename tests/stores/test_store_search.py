"""A Milvus Lite store searched as an `EmbeddingIndex`: ids as keys, FLAT equal to exact search,
the same re-ranking, calibration and matching, and the wrong model refused (real Milvus Lite)."""

import contextlib
import io
import os

import numpy as np
import pytest

from keras_dml.stores import MilvusStore, ModelMismatchError, StoreError, StoreIndex
from keras_dml_cli import main
from tests.stores.gallery import gallery_folder, skip_without, store_from_folder

skip_without("pymilvus", "milvus_lite")


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    """The model, the folder, a FLAT store of it and the exact in-memory index of it."""
    root, model, folder = gallery_folder(tmp_path_factory, "store")
    store, exact = store_from_folder(str(root / "photos.db"), model, folder)
    yield model, folder, store, exact
    store.close()


def test_writing_the_same_ids_again_adds_no_rows(gallery):
    _, _, store, exact = gallery
    before = store.count()
    labels = [exact.class_names[label] for label in exact.labels]
    store.write(exact.ids, exact.embeddings, labels, exact.ids)
    assert before == store.count() == len(exact)


def test_flat_search_equals_exact_search(gallery):
    model, _, store, exact = gallery
    index = StoreIndex(store, model=model)
    assert index.ids == exact.ids and index.class_names == exact.class_names
    np.testing.assert_array_equal(index.labels, exact.labels)
    found, expected = index.search(exact.embeddings, k=5), exact.search(exact.embeddings, k=5)
    np.testing.assert_array_equal(found.indices, expected.indices)
    np.testing.assert_allclose(found.scores, expected.scores, atol=1e-5)
    assert found.ids.tolist() == expected.ids.tolist()
    np.testing.assert_allclose(index.embeddings, exact.embeddings)


def test_images_learners_reranking_calibration_and_matching_as_exact(gallery):
    model, folder, store, exact = gallery
    index = StoreIndex(store, model=model)
    query = os.path.join(folder, "dog", "0.png")
    for options in (
        {},
        {"learner": 1},
        {"rerank": "dba"},
        {"rerank": {"name": "k_reciprocal", "k1": 4, "k2": 2}},
    ):
        found, expected = index.search(query, k=3, **options), exact.search(query, k=3, **options)
        np.testing.assert_array_equal(found.indices, expected.indices)
    assert index.calibrate(target_precision=0.5) == exact.calibrate(target_precision=0.5)
    assert index.match(query).matched.tolist() == exact.match(query).matched.tolist()
    index.save_calibration()
    assert StoreIndex(store).threshold == exact.threshold
    assert index.exact and index.measure_recall(sample=10, k=3) == 1.0


def test_hnsw_reports_its_recall_against_exact_search(gallery, tmp_path):
    model, folder, _, exact = gallery
    store, _ = store_from_folder(str(tmp_path / "hnsw.db"), model, folder, index="hnsw")
    index = StoreIndex(store)
    assert not index.exact and index.backend_name == "hnsw"
    assert 0.0 < index.measure_recall(sample=10, k=3) <= 1.0
    store.close()


def test_another_model_or_a_missing_collection_is_refused(gallery):
    model, _, store, _ = gallery
    other = os.path.join(os.path.dirname(model), "other.keras")
    with pytest.raises(ModelMismatchError, match="other.keras' has other weights"):
        StoreIndex(store, model=other)
    with pytest.raises(StoreError, match="no collection 'nothing'"):
        StoreIndex(MilvusStore(store.uri, "nothing"))


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_search_store_prints_what_search_gallery_prints(gallery):
    model, folder, store, _ = gallery
    queries = [os.path.join(folder, "cat", "1.png"), os.path.join(folder, "owl", "2.png")]
    common = ["--query", *queries, "-k", "4"]
    code, from_store, _ = cli("search", model, "--store", store.uri, *common)
    assert code == 0
    assert (0, from_store, "") == cli("search", model, "--gallery", folder, *common)
    other = os.path.join(os.path.dirname(model), "other.keras")
    code, _, error = cli("search", other, "--store", store.uri, *common)
    assert code == 1 and error.count("\n") == 1 and "has other weights" in error
