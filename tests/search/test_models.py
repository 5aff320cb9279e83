"""`EmbeddingIndex.from_model` with a Keras model, a SavedModel folder and an ONNX file."""

import numpy as np
import pytest

from keras_dml.models import EmbeddingModel
from keras_dml.search import EmbeddingIndex, IndexFormatError
from keras_dml.utils import is_available
from tests.export.test_parity import digit_images, tiny_backbone


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from keras_dml.export import export_saved_model

    root = tmp_path_factory.mktemp("search_models")
    model = EmbeddingModel(tiny_backbone(), learner_dims=(8, 8))
    export_saved_model(model, root / "saved_model")
    paths = {"keras": model, "saved_model": str(root / "saved_model")}
    if is_available("onnxruntime") and is_available("tf2onnx"):
        from keras_dml.export import export_onnx

        export_onnx(model, root / "model.onnx")
        paths["onnx"] = str(root / "model.onnx")
    return model, paths, root


@pytest.mark.parametrize("kind", ["keras", "saved_model", "onnx"])
def test_every_model_format_embeds_like_keras(exported, kind):
    model, paths, _ = exported
    if kind not in paths:
        pytest.skip("onnx export needs onnxruntime and tf2onnx")
    images = digit_images(10).astype("float32")
    index = EmbeddingIndex.from_model(paths[kind], images, labels=np.arange(10) % 3)
    expected = np.asarray(model(images))
    np.testing.assert_allclose(index.embeddings, expected, atol=1e-5)
    assert index.embedder.image_size == (32, 32)
    if kind != "saved_model":  # SavedModel signatures carry no learner layout
        assert [tuple(s) for s in index.learner_slices] == [(0, 8), (8, 16)]
    result = index.search(images[:3], k=2)
    assert result.indices[:, 0].tolist() == [0, 1, 2]


def test_loading_with_a_model_of_another_size_is_refused(exported, tmp_path):
    model, _, _ = exported
    images = digit_images(6).astype("float32")
    EmbeddingIndex.from_model(model, images).save(tmp_path / "idx")
    other = EmbeddingModel(tiny_backbone(seed=1), learner_dims=(4,))
    with pytest.raises(IndexFormatError, match="embeds to 4 dimensions but the index .* 16-d"):
        EmbeddingIndex.load(tmp_path / "idx", model=other)
    loaded = EmbeddingIndex.load(tmp_path / "idx", model=model)
    assert loaded.search(images[4:5], k=1).indices.tolist() == [[4]]


@pytest.mark.parametrize("kind", ["keras", "onnx"])
def test_gallery_from_an_image_dataset(exported, kind):
    """An `ImageDataset` gallery: the model's embeddings, with its labels, paths and classes."""
    from keras_dml.data import from_arrays

    model, paths, _ = exported
    if kind not in paths:
        pytest.skip("onnx export needs onnxruntime and tf2onnx")
    images = digit_images(12).astype("uint8")
    labels = np.arange(12) % 3
    data = from_arrays(images, labels, class_names=["a", "b", "c"], split="all")
    index = EmbeddingIndex.from_model(paths[kind], gallery=data)
    expected = np.asarray(model(images.astype("float32")))
    np.testing.assert_allclose(index.embeddings, expected, atol=1e-5)
    np.testing.assert_array_equal(index.labels, labels)
    assert index.class_names == ["a", "b", "c"]
    assert index.search(images[5:6].astype("float32"), k=1).indices.tolist() == [[5]]
