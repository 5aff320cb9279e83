"""A Beam DirectRunner pipeline over a folder with bad files, into a Milvus Lite file and Parquet
shards (real engines): bad files counted and named, a rerun adds no rows, search equals exact
search, another model refused."""

import contextlib
import glob
import io
import os

import numpy as np
import pytest
from PIL import Image

from keras_dml.search import EmbeddingIndex
from keras_dml.stores import MilvusStore, ModelMismatchError, StoreIndex
from keras_dml_cli import main
from tests.stores.gallery import gallery_folder, skip_without

skip_without("apache_beam", "pymilvus", "milvus_lite")

from keras_dml.pipelines.embed import embed_images  # noqa: E402 (after the skips)


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """The folder (15 images, a text file named .png and a NaN TIFF) embedded once."""
    root, model, folder = gallery_folder(tmp_path_factory, "pipeline")
    with open(os.path.join(folder, "dog", "broken.png"), "wb") as file:
        file.write(b"not an image")
    nan = np.full((32, 32), np.nan, np.float32)
    Image.fromarray(nan).save(os.path.join(folder, "owl", "nan.tif"))
    store, output = str(root / "photos.db"), str(root / "parquet")
    counts = embed_images(model, folder, store=store, output=output, batch_size=4)
    return model, folder, store, output, counts


def good_paths(folder):
    paths = glob.glob(os.path.join(folder, "*", "*.png"))
    return sorted(p for p in paths if not p.endswith("broken.png"))


def test_bad_files_are_counted_and_named_and_never_stop_the_pipeline(embedded):
    _, folder, store, _, counts = embedded
    assert {k: counts[k] for k in ("files", "bad_files", "embedded", "written")} == {
        "files": 17,
        "bad_files": 2,
        "embedded": 15,
        "written": 15,
    }
    names = counts["bad_file_names"]
    assert [name.split(" (")[0] for name in names] == [
        os.path.join(folder, "dog", "broken.png"),
        os.path.join(folder, "owl", "nan.tif"),
    ]
    assert "not an image file" in names[0] and "NaN" in names[1]
    assert MilvusStore(store).count() == 15


def test_the_store_search_equals_exact_search_of_the_same_files(embedded):
    model, folder, store, _, _ = embedded
    exact = EmbeddingIndex(model=model).add(good_paths(folder))
    index = StoreIndex(store, model=model)
    assert index.ids == exact.ids and index.class_names == ["cat", "dog", "owl"]
    found, expected = index.search(exact.embeddings, k=4), exact.search(exact.embeddings, k=4)
    np.testing.assert_array_equal(found.indices, expected.indices)
    np.testing.assert_allclose(found.scores, expected.scores, atol=1e-5)


def test_the_parquet_shards_hold_the_same_rows(embedded):
    pyarrow_parquet = pytest.importorskip("pyarrow.parquet")
    _, _, store, output, _ = embedded
    table = pyarrow_parquet.read_table(sorted(glob.glob(os.path.join(output, "*.parquet"))))
    rows = sorted(zip(table["id"].to_pylist(), table["vector"].to_pylist()))
    index = StoreIndex(store)
    assert [key for key, _ in rows] == index.ids
    np.testing.assert_allclose(np.array([v for _, v in rows]), index.embeddings, atol=1e-6)


def test_a_rerun_writes_nothing_new_and_another_model_is_refused(embedded):
    model, folder, store, _, _ = embedded
    before = StoreIndex(store).embeddings
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["embed", model, "--images", folder, "--store", store]) == 0
    assert "embedded 15 of 17 image files" in out.getvalue()
    assert out.getvalue().count("skipped a bad file") == 2
    again = StoreIndex(store)
    assert len(again) == MilvusStore(store).count() == 15
    np.testing.assert_allclose(again.embeddings, before, atol=1e-6)  # other batch sizes
    other = os.path.join(os.path.dirname(model), "other.keras")
    with pytest.raises(ModelMismatchError, match="has other weights"):
        embed_images(other, folder, store=store)
