"""Export API: argument checks, errors, ONNX graph details, the CLI and the export script."""

import argparse
import importlib.util
import io
import json
import sys
from pathlib import Path

import keras
import numpy as np
import onnx
import pytest

from keras_dml.export import (
    ExportError,
    ExportParityError,
    export_onnx,
    export_saved_model,
)
from keras_dml.export.report import check_parity
from keras_dml.export.signature import resolve_image_shape
from keras_dml.models import EmbeddingModel
from keras_dml.utils import MissingDependencyError
from keras_dml_cli.arguments.export import add_export_parser
from keras_dml_cli.run.export import run_export
from tests.export.test_parity import tiny_backbone
from tests.support.paths import REPO_ROOT

REPO = Path(REPO_ROOT)


@pytest.fixture(scope="module")
def model():
    return EmbeddingModel(tiny_backbone(), learner_dims=(4, 4), learner_weights=(1.0, 0.5))


class NeverBuilt(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(4)

    def call(self, images):
        return self.dense(keras.ops.mean(images, axis=(1, 2)))


class TwoOutputs(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(4)

    def build(self, input_shape):
        self.dense.build((None, input_shape[-1]))

    def call(self, images):
        pooled = keras.ops.mean(images, axis=(1, 2))
        return self.dense(pooled), pooled


def any_size_model():
    inputs = keras.Input((None, None, 3))
    x = keras.layers.Rescaling(1.0 / 255.0)(inputs)
    x = keras.layers.Conv2D(4, 3)(x)
    return keras.Model(inputs, keras.layers.GlobalAveragePooling2D()(x))


def test_unbuilt_model_is_rejected(tmp_path):
    with pytest.raises(ExportError, match="never built"):
        export_saved_model(NeverBuilt(), tmp_path / "sm")
    with pytest.raises(ExportError, match="keras.Model"):
        export_onnx("model.keras", tmp_path / "m.onnx")


def test_image_size_rules(model):
    assert resolve_image_shape(model) == (32, 32, 3)
    assert resolve_image_shape(model, 32) == (32, 32, 3)
    with pytest.raises(ExportError, match="contradicts"):
        resolve_image_shape(model, (64, 64))
    free = any_size_model()
    with pytest.raises(ExportError, match="image_size"):
        resolve_image_shape(free)
    assert resolve_image_shape(free, (24, 40)) == (24, 40, 3)


def test_any_size_model_exports_at_requested_size(tmp_path):
    import onnxruntime as ort

    free = any_size_model()
    report = export_onnx(free, tmp_path / "m.onnx", image_size=(24, 40))
    assert report.image_shape == [24, 40, 3]
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    assert session.get_inputs()[0].shape == ["batch", 24, 40, 3]


def test_bad_arguments(model, tmp_path):
    with pytest.raises(ExportError, match="input_dtype"):
        export_saved_model(model, tmp_path / "sm", input_dtype="float16")
    with pytest.raises(ExportError, match="input_dtype"):
        export_onnx(model, tmp_path / "m.onnx", input_dtype="both")
    with pytest.raises(ValueError, match="opset"):
        export_onnx(model, tmp_path / "m.onnx", opset=9)
    two_outputs = TwoOutputs()
    two_outputs.build((None, 8, 8, 3))
    with pytest.raises(ExportError, match="ONE embedding"):
        export_saved_model(two_outputs, tmp_path / "two")


def test_existing_saved_model_is_not_overwritten(model, tmp_path):
    export_saved_model(model, tmp_path / "sm", verify=False)
    with pytest.raises(FileExistsError, match="already holds"):
        export_saved_model(model, tmp_path / "sm")


def test_parity_failure_raises(model, tmp_path, monkeypatch):
    with pytest.raises(ExportParityError, match="exceeds atol"):
        check_parity(np.ones((2, 3)), np.zeros((2, 3)), 1e-5, "test")
    with pytest.raises(ExportParityError, match="shape"):
        check_parity(np.ones((2, 3)), np.zeros((3, 3)), 1e-5, "test")
    import keras_dml.export.saved_model as saved_model_module

    real = saved_model_module.keras_embeddings
    monkeypatch.setattr(
        saved_model_module, "keras_embeddings", lambda m, images: real(m, images) + 1e-3
    )
    with pytest.raises(ExportParityError, match="serve"):
        export_saved_model(model, tmp_path / "sm")


def test_missing_onnx_dependency_names_the_extra(model, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tf2onnx", None)
    with pytest.raises(MissingDependencyError, match=r"keras-dml\[onnx-tensorflow\]"):
        export_onnx(model, tmp_path / "m.onnx")


def test_onnx_graph_names_shapes_and_metadata(model, tmp_path):
    report = export_onnx(model, tmp_path / "sub" / "m.onnx", opset=15, input_dtype="uint8")
    proto = onnx.load(str(tmp_path / "sub" / "m.onnx"))
    onnx.checker.check_model(proto)
    assert [i.name for i in proto.graph.input] == ["images"]
    assert [o.name for o in proto.graph.output] == ["embedding"]
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch" and [d.dim_value for d in dims[1:]] == [32, 32, 3]
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.UINT8
    assert {o.domain: o.version for o in proto.opset_import}[""] == 15
    meta = {p.key: p.value for p in proto.metadata_props}
    assert meta["keras_dml.learner_dims"] == "4,4"
    assert meta["keras_dml.learner_weights"] == "1.0,0.5"
    assert meta["keras_dml.image_shape"] == "32,32,3"
    assert report.opset == 15 and report.input_dtypes == ["uint8"] and report.embedding_dim == 8
    assert "parity (uint8 input)" in str(report)


def test_cli_exports_a_keras_file(model, tmp_path):
    model_path = tmp_path / "model.keras"
    model.save(model_path)
    parser = argparse.ArgumentParser(prog="keras-dml")
    add_export_parser(parser.add_subparsers(dest="command"))

    out = io.StringIO()
    args = parser.parse_args(
        ["export", str(model_path), "--format", "onnx", "--output", str(tmp_path / "m.onnx")]
        + ["--opset", "17", "--json"]
    )
    assert run_export(args, out=out) == 0
    report = json.loads(out.getvalue())
    assert report["format"] == "onnx" and report["max_abs_diff"]["float32"] <= 1e-5

    out = io.StringIO()
    args = parser.parse_args(
        ["export", str(model_path), "--format", "saved_model", "--output", str(tmp_path / "sm")]
        + ["--input-dtype", "both", "--image-size", "32"]
    )
    assert run_export(args, out=out) == 0
    assert "float32 or uint8" in out.getvalue()

    err = io.StringIO()
    args = parser.parse_args(
        ["export", str(model_path), "--format", "onnx", "--output", str(tmp_path / "x.onnx")]
        + ["--input-dtype", "both"]
    )
    assert run_export(args, out=io.StringIO(), err=err) == 1
    assert "SavedModel only" in err.getvalue()

    err = io.StringIO()
    args = parser.parse_args(
        ["export", str(model_path), "--format", "onnx", "--output", str(tmp_path / "y.onnx")]
        + ["--image-size", "64"]
    )
    assert run_export(args, out=io.StringIO(), err=err) == 1
    assert "contradicts" in err.getvalue()


def test_export_model_script_writes_manifest(model, tmp_path):
    model_path = tmp_path / "model.keras"
    model.save(model_path)
    spec = importlib.util.spec_from_file_location(
        "export_model_script", REPO / "deployment" / "export_model.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out_dir = tmp_path / "dist"
    code = script.main(
        [str(model_path), "--output-dir", str(out_dir), "--input-dtype", "both", "--opset", "17"]
    )
    assert code == 0
    manifest = json.loads((out_dir / "export_manifest.json").read_text())
    formats = [(a["format"], a["input_dtypes"]) for a in manifest["artifacts"]]
    assert formats == [
        ("saved_model", ["float32", "uint8"]),
        ("onnx", ["float32"]),
        ("onnx", ["uint8"]),
    ]
    assert (out_dir / "model.onnx").is_file() and (out_dir / "model_uint8.onnx").is_file()
    assert (out_dir / "saved_model" / "saved_model.pb").is_file()
