"""ONNX export from the PyTorch backend without TensorFlow: the TensorFlow export's contract.

A `.keras` model loaded on PyTorch, with `import tensorflow` and `import tf2onnx` blocked
(`tests.support.no_tensorflow`), exports ONNX through `torch.onnx`'s dynamo exporter
(`keras_dml.export.onnx_torch`) with the input `images` (float32 or uint8, dynamic batch, fixed
`H, W, C`), the output `embedding` (concatenated per-learner L2-normalised embeddings), NaN rows
for non-finite images, and onnxruntime parity <= 1e-5 with the Keras model; an opset below 18,
a missing onnxscript, SavedModel export and ONNX export on JAX are refused in one line naming
the fix.
"""

import textwrap

from tests.support.no_tensorflow import CLI_RUNNER, run_blocked

TORCH_EXPORT_RUN = CLI_RUNNER + textwrap.dedent(
    """
    import contextlib, io, os, runpy, sys, tempfile
    import numpy as np
    sys.modules["tf2onnx"] = None  # the `onnx` extra brings no tf2onnx
    import keras
    import onnx
    import onnxruntime
    from keras_dml import backbones
    from keras_dml.export import ExportError, export_onnx, export_saved_model
    from keras_dml.methods import get_method
    from keras_dml.search import EmbeddingIndex
    from keras_dml.utils import MissingDependencyError


    root = tempfile.mkdtemp()
    built = get_method("bier").tiny_model(backbones.get("convnet", input_shape=(32, 32, 3)))
    model_path = os.path.join(root, "model.keras")
    built.save(model_path)
    model = keras.saving.load_model(model_path)
    rng = np.random.default_rng(1)
    pixels = rng.integers(0, 256, (5, 32, 32, 3))  # 5 rows: not the traced batch size

    # Refused in one line before anything is written: an opset the dynamo exporter does not
    # write (it would write 18 instead), and a missing onnxscript (the exporter needs it).
    try:
        export_onnx(model, os.path.join(root, "old.onnx"), opset=17)
        raise AssertionError("opset 17 was accepted on PyTorch")
    except ExportError as error:
        assert "opset=18" in str(error) and "\\n" not in str(error), error
    saved, sys.modules["onnxscript"] = sys.modules.get("onnxscript"), None
    try:
        export_onnx(model, os.path.join(root, "no_onnxscript.onnx"))
        raise AssertionError("exported without onnxscript")
    except MissingDependencyError as error:
        assert 'pip install "keras-dml[onnx]"' in str(error) and "\\n" not in str(error), error
    finally:
        sys.modules.pop("onnxscript")
        if saved is not None:
            sys.modules["onnxscript"] = saved
    assert sorted(os.listdir(root)) == ["model.keras"], os.listdir(root)

    for dtype, onnx_type in (("float32", "tensor(float)"), ("uint8", "tensor(uint8)")):
        path = os.path.join(root, f"model_{dtype}.onnx")
        report = export_onnx(model, path, input_dtype=dtype)
        assert report.max_abs_diff[dtype] <= 1e-5, report
        opsets = {o.domain: o.version for o in onnx.load(path).opset_import}
        assert report.opset == 18 and opsets[""] == 18, (report.opset, opsets)
        assert report.excluded_weights and all("regressor" in w for w in report.excluded_weights)
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        (graph_input,), (graph_output,) = session.get_inputs(), session.get_outputs()
        assert (graph_input.name, graph_input.type) == ("images", onnx_type), graph_input
        assert graph_input.shape == ["batch", 32, 32, 3], graph_input.shape
        assert (graph_output.name, graph_output.shape) == ("embedding", ["batch", 24])
        meta = session.get_modelmeta().custom_metadata_map
        assert meta["keras_dml.learner_dims"] == "4,8,12", meta

        images = pixels.astype(dtype)
        (exported,) = session.run(["embedding"], {"images": images})
        expected = keras.ops.convert_to_numpy(model(images.astype("float32"), training=False))
        difference = float(np.abs(exported - expected).max())
        assert difference <= 1e-5, difference
        # A batch of one: a size torch.export specialises when it is the traced one.
        (single,) = session.run(["embedding"], {"images": images[:1]})
        assert float(np.abs(single - expected[:1]).max()) <= 1e-5
        # BIER's embedding: each learner's group L2-normalised, times its fixed scale.
        for (start, stop), scale in zip(model.learner_slices(), model.learner_weights):
            norms = np.linalg.norm(exported[:, start:stop], axis=1)
            np.testing.assert_allclose(norms, scale, atol=1e-5)
        try:
            session.run(None, {"images": np.zeros((2, 16, 16, 3), dtype)})
            raise AssertionError("a 16 px batch was embedded")
        except Exception as error:
            assert "invalid dimensions" in str(error).lower(), error

    nan_images = pixels.astype("float32")
    nan_images[1, 3, 4, 0] = np.nan
    (exported,) = onnxruntime.InferenceSession(
        os.path.join(root, "model_float32.onnx"), providers=["CPUExecutionProvider"]
    ).run(["embedding"], {"images": nan_images})
    assert np.isnan(exported[1]).all() and np.isfinite(np.delete(exported, 1, axis=0)).all()

    # The exported file serves search like the TensorFlow export's (onnxruntime, no TensorFlow).
    index = EmbeddingIndex(model=os.path.join(root, "model_uint8.onnx"))
    assert index.embedder.learner_slices == [(0, 4), (4, 12), (12, 24)]
    index.add(pixels.astype("uint8"))
    np.testing.assert_array_equal(index.search(pixels[:2], k=1).indices[:, 0], [0, 1])

    try:
        export_saved_model(model, os.path.join(root, "saved_model"))
        raise AssertionError("a SavedModel was exported without TensorFlow")
    except ExportError as error:
        assert str(error).startswith("SavedModel export needs TensorFlow"), error
        assert "format='onnx'" in str(error) and "\\n" not in str(error)

    output = os.path.join(root, "cli.onnx")
    code, out, err = cli("export", model_path, "--format", "onnx", "--output", output)
    assert code == 0 and os.path.isfile(output), err
    assert "parity (float32 input)" in out and "opset: 18" in out, out
    onnx.checker.check_model(output)
    code, out, err = cli(
        "export", model_path, "--format", "onnx", "--output", output + "17", "--opset", "17"
    )
    assert code == 1 and len(err.splitlines()) == 1 and "--opset 18" in err, err
    code, out, err = cli(
        "export", model_path, "--format", "saved_model", "--output", os.path.join(root, "sm")
    )
    assert code == 1 and len(err.splitlines()) == 1, err
    assert "SavedModel export needs TensorFlow" in err, err

    assert "tensorflow" not in sys.modules, "tensorflow was imported"
    print("ONNX-EXPORTED-WITHOUT-TENSORFLOW")
    """
)

JAX_REFUSAL_RUN = textwrap.dedent(
    """
    import os, sys, tempfile
    from keras_dml import backbones
    from keras_dml.export import ExportError, export_onnx, export_saved_model
    from keras_dml.methods import get_method

    model = get_method("baseline").tiny_model(backbones.get("convnet", input_shape=(32, 32, 3)))
    root = tempfile.mkdtemp()
    for export, target, start in (
        (export_onnx, "model.onnx", "ONNX export runs on the PyTorch or TensorFlow backend"),
        (export_saved_model, "saved_model", "SavedModel export needs TensorFlow"),
    ):
        try:
            export(model, os.path.join(root, target))
            raise AssertionError(f"{export.__name__} ran on JAX")
        except ExportError as error:
            assert str(error).startswith(start) and "\\n" not in str(error), error
    assert not os.listdir(root), os.listdir(root)
    assert "tensorflow" not in sys.modules, "tensorflow was imported"
    print("JAX-EXPORTS-REFUSED-IN-ONE-LINE")
    """
)


def test_onnx_export_from_torch_has_the_contract_and_parity_without_tensorflow(tmp_path):
    result = run_blocked(tmp_path, "torch", TORCH_EXPORT_RUN)
    assert "ONNX-EXPORTED-WITHOUT-TENSORFLOW" in result.stdout, result.stderr[-3000:]


def test_exports_on_jax_without_tensorflow_are_refused_in_one_line(tmp_path):
    result = run_blocked(tmp_path, "jax", JAX_REFUSAL_RUN)
    assert "JAX-EXPORTS-REFUSED-IN-ONE-LINE" in result.stdout, result.stderr[-3000:]
