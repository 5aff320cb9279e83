"""The model identity a store keeps: the same weights pass in any format, other weights do not."""

import numpy as np
import pytest

from keras_dml.serving.embedder import Embedder
from keras_dml.stores import ModelMismatchError, check_identity, model_identity
from keras_dml.stores.uri import store_address
from keras_dml.zoo.loading import resolve_model
from tests.stores.gallery import make_gallery


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("identity")
    model, _ = make_gallery(str(root), per_class=1)
    return model, str(root / "other.keras")


def identity(path):
    return model_identity(Embedder(resolve_model(path)), path)


def test_the_same_weights_pass_and_the_identity_holds_size_and_slices(models):
    first, again = identity(models[0]), identity(models[0])
    assert first["dim"] == 16 and first["learner_slices"] == [[0, 8], [8, 16]]
    assert len(first["fingerprint"]) == 16
    check_identity(first, again, "the store")


def test_an_onnx_export_of_the_same_weights_passes(models, tmp_path):
    pytest.importorskip("onnxruntime")
    from keras_dml.export import export_onnx
    from keras_dml.zoo.loading import load

    export_onnx(load(models[0]), str(tmp_path / "model.onnx"))
    check_identity(identity(models[0]), identity(str(tmp_path / "model.onnx")), "the store")


def test_a_model_with_other_weights_is_refused_in_one_line(models):
    with pytest.raises(ModelMismatchError, match="has other weights") as error:
        check_identity(identity(models[0]), identity(models[1]), "the store")
    assert "\n" not in str(error.value) and "other.keras" in str(error.value)


def test_another_size_or_other_learner_slices_are_refused(models):
    stored = identity(models[0])
    with pytest.raises(ModelMismatchError, match="embeds to 8 dimensions"):
        check_identity(stored, {**stored, "dim": 8, "model": "small"}, "the store")
    with pytest.raises(ModelMismatchError, match="learner slices"):
        check_identity(stored, {**stored, "learner_slices": [[0, 16]]}, "the store")
    check_identity(stored, {**stored, "learner_slices": None}, "the store")  # unknown: not compared
    drift = {**stored, "fingerprint": list(np.add(stored["fingerprint"], 1e-4))}
    check_identity(stored, drift, "the store")  # an export's rounding passes


def test_store_addresses():
    assert store_address("milvus://runs/photos.db").endswith("/runs/photos.db")
    assert store_address("http://host:19530") == "http://host:19530"
    with pytest.raises(ValueError, match="Milvus Lite file"):
        store_address("runs/photos")
