"""The ONNX graph exported on PyTorch has the TensorFlow export's contract, input to output.

One `.keras` file is exported twice per input dtype: by tf2onnx on the TensorFlow backend (this
process) and by `torch.onnx.export` on PyTorch with `import tensorflow` blocked
(`tests.support.no_tensorflow`). Both graphs must declare the same input (name, dtype, shape with
a dynamic batch), output and keras-dml metadata, and embed the same images alike, NaN rows
included.
"""

import json
import textwrap

import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.export import export_onnx
from keras_dml.methods import get_method
from tests.support.no_tensorflow import run_blocked

DTYPES = ("float32", "uint8")
PRODUCER_KEYS = ("keras_dml.version",)  # metadata naming the producer, not the contract

DESCRIBE = textwrap.dedent(
    """
    def describe(path):
        import onnxruntime
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        (graph_input,), (graph_output,) = session.get_inputs(), session.get_outputs()
        return {
            "input": [graph_input.name, graph_input.type, [str(d) for d in graph_input.shape]],
            "output": [graph_output.name, graph_output.type, [str(d) for d in graph_output.shape]],
            "metadata": dict(session.get_modelmeta().custom_metadata_map),
        }
    """
)

TORCH_EXPORT = DESCRIBE + textwrap.dedent(
    """
    import json, sys
    import keras
    import keras_dml.models  # registers the model classes the .keras file names
    from keras_dml.export import export_onnx

    model = keras.saving.load_model(MODEL_PATH)
    for dtype, path in OUTPUTS.items():
        export_onnx(model, path, input_dtype=dtype)
        print(f"DESCRIPTION {dtype} " + json.dumps(describe(path)))
    assert "tensorflow" not in sys.modules, "tensorflow was imported"
    """
)


def describe(path):
    namespace = {}
    exec(DESCRIBE, namespace)  # the description the PyTorch run prints
    return namespace["describe"](path)


def embeddings(path, images):
    import onnxruntime

    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(["embedding"], {"images": images})[0]


@pytest.mark.slow
@pytest.mark.tf_only("exports the reference ONNX graphs through tf2onnx")
def test_torch_and_tensorflow_onnx_graphs_share_the_contract(tmp_path):
    model = get_method("bier").tiny_model(backbones.get("convnet", input_shape=(32, 32, 3)))
    model.save(tmp_path / "model.keras")
    tf_paths = {dtype: str(tmp_path / f"tf_{dtype}.onnx") for dtype in DTYPES}
    torch_paths = {dtype: str(tmp_path / f"torch_{dtype}.onnx") for dtype in DTYPES}
    for dtype, path in tf_paths.items():
        export_onnx(model, path, input_dtype=dtype)
    code = f"MODEL_PATH = {str(tmp_path / 'model.keras')!r}\nOUTPUTS = {torch_paths!r}\n"
    (tmp_path / "hook").mkdir()
    result = run_blocked(tmp_path / "hook", "torch", code + TORCH_EXPORT)
    printed = dict(
        line.split(" ", 2)[1:] for line in result.stdout.splitlines() if line.startswith("DESC")
    )
    assert sorted(printed) == sorted(DTYPES), result.stderr[-3000:]

    pixels = np.random.default_rng(3).integers(0, 256, (3, 32, 32, 3))
    for dtype in DTYPES:
        graphs = [describe(tf_paths[dtype]), json.loads(printed[dtype])]
        for graph in graphs:
            for key in PRODUCER_KEYS:
                graph["metadata"].pop(key)
        assert graphs[1] == graphs[0], dtype
        images = pixels.astype(dtype)
        if dtype == "float32":
            images[2, 0, 0, 1] = np.inf
        tf_output, torch_output = (embeddings(p[dtype], images) for p in (tf_paths, torch_paths))
        assert np.isnan(tf_output[2]).all() == (dtype == "float32")
        np.testing.assert_array_equal(np.isnan(torch_output), np.isnan(tf_output))
        np.testing.assert_allclose(torch_output, tf_output, atol=2e-5)
