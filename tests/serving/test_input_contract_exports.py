"""The input contract in exported graphs and the ONNX client: every bad input, every path.

Inside the SavedModel signature and the ONNX graph a non-finite image gets a NaN embedding row
(it used to get a finite one) and a wrong shape is refused by the graph; the ONNX client, a host
path, refuses or warns like `embed` and `EmbeddingIndex` (it used to resize and convert arrays).
"""

import numpy as np
import pytest

from keras_dml.export import export_onnx, export_saved_model
from keras_dml.methods import get_method
from tests.export.test_onnx_client import load_client
from tests.export.test_parity import convnet
from tests.serving.test_input_contract import (
    BAD,
    HOST_REFUSALS,
    UNIT_WARNING,
    bad_inputs,
    expect_host_behaviour,
)

pytestmark = pytest.mark.tf_only("exports SavedModel and ONNX graphs through TensorFlow")

# What the exported graphs (no Python per batch) do with a wrongly shaped or typed batch.
GRAPH_REFUSALS = {
    "saved_model": {
        "wrong_size": r"must have shape \[N, 32, 32, 3\]",
        "one_channel": r"must have shape \[N, 32, 32, 3\]",
        "wrong_dtype": "expected to be a float tensor",
    },
    "onnx": {
        "wrong_size": "invalid dimensions",
        "one_channel": "invalid dimensions",
        "wrong_dtype": "Unexpected input data type",
    },
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("contract")
    model = get_method("baseline").tiny_model(convnet())
    export_saved_model(model, str(root / "saved_model"), input_dtype="both")
    export_onnx(model, str(root / "model.onnx"))
    return model, root


def run_graph(exported, kind, images):
    import onnxruntime
    import tensorflow as tf

    _, root = exported
    if kind == "saved_model":
        serve = tf.saved_model.load(str(root / "saved_model")).signatures["serving_default"]
        return serve(images=tf.constant(images))["embedding"].numpy()
    session = onnxruntime.InferenceSession(str(root / "model.onnx"))
    return session.run(None, {"images": images})[0]


@pytest.mark.parametrize("kind", ["saved_model", "onnx"])
@pytest.mark.parametrize("name", BAD)
def test_exported_graphs_give_nan_rows_or_refuse(exported, kind, name):
    model, _ = exported
    images = bad_inputs()[name]
    if name in ("nan", "inf", "unit_scaled"):
        output = run_graph(exported, kind, images)
        expected = model.predict(images, verbose=0)
        np.testing.assert_array_equal(np.isnan(output), np.isnan(expected))
        assert np.isnan(output[0]).all() == (name != "unit_scaled")
        np.testing.assert_allclose(output[1], expected[1], atol=1e-5)
    else:
        with pytest.raises(Exception, match=GRAPH_REFUSALS[kind][name]):
            run_graph(exported, kind, images)


@pytest.mark.parametrize("kind", ["saved_model", "model.onnx"])
@pytest.mark.parametrize("name", BAD)
def test_index_over_an_exported_model_applies_the_contract(exported, kind, name):
    from keras_dml.search import EmbeddingIndex

    _, root = exported
    index = EmbeddingIndex.from_model(str(root / kind), bad_inputs()["unit_scaled"] * 255.0)
    expect_host_behaviour(name, lambda: index.search(bad_inputs()[name], k=1))


def test_uint8_signature_serves_like_float(exported):
    import tensorflow as tf

    _, root = exported
    images = bad_inputs()["unit_scaled"] * 255.0
    loaded = tf.saved_model.load(str(root / "saved_model"))
    as_uint8 = loaded.signatures["serve_uint8"](images=tf.constant(images.astype("uint8")))
    as_float = loaded.signatures["serve"](images=tf.constant(np.rint(images)))
    np.testing.assert_allclose(as_uint8["embedding"], as_float["embedding"], atol=1e-5)


@pytest.mark.parametrize("name", BAD)
def test_onnx_client_applies_the_contract(exported, name):
    _, root = exported
    client_module = load_client()
    client = client_module.EmbeddingClient(str(root / "model.onnx"))
    images = bad_inputs()[name]
    if name == "unit_scaled":
        with pytest.warns(UserWarning, match=UNIT_WARNING) as caught:
            assert np.isfinite(client.embed(images)).all()
        assert len(caught) == 1
        return
    with pytest.raises(client_module.ClientError, match=HOST_REFUSALS[name]) as error:
        client.embed(images)
    assert "\n" not in str(error.value)


def test_onnx_client_refuses_nan_embeddings(exported, monkeypatch):
    """A consumer of the graph's output: a NaN row (a broken image) is never returned."""
    _, root = exported
    client_module = load_client()
    client = client_module.EmbeddingClient(str(root / "model.onnx"))
    monkeypatch.setattr(client.session, "run", lambda *args: [np.full((2, 16), np.nan)])
    with pytest.raises(client_module.ClientError, match="Row 0 of the embeddings is NaN"):
        client.embed(bad_inputs()["nan"][1:] * 0 + 128)


def test_onnx_client_loads_the_contract_copied_next_to_it(exported, tmp_path, monkeypatch):
    """The serving-machine layout (no keras-dml installed): the client refuses to run without
    input_contract.py and uses the copy next to it (loaded by path: NumPy only)."""
    import importlib.util
    import shutil
    import sys

    from tests.export.test_onnx_client import CLIENT, REPO

    _, root = exported
    shutil.copy(CLIENT, tmp_path / "onnx_client.py")
    spec = importlib.util.spec_from_file_location("copied_client", tmp_path / "onnx_client.py")
    client_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(client_module)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)  # not installed
    monkeypatch.delitem(sys.modules, "_keras_dml_input_contract", raising=False)
    with pytest.raises(client_module.ClientError, match="copy keras_dml/serving/input_contract"):
        client_module.EmbeddingClient(str(root / "model.onnx"))
    shutil.copy(REPO / "keras_dml" / "serving" / "input_contract.py", tmp_path)
    try:
        client = client_module.EmbeddingClient(str(root / "model.onnx"))
        assert client.contract.__file__ == str(tmp_path / "input_contract.py")
        with pytest.raises(client_module.ClientError, match="NaN or infinite pixels"):
            client.embed(bad_inputs()["nan"])
    finally:
        sys.modules.pop("_keras_dml_input_contract", None)  # later clients load the checkout's
