"""`keras-dml train --backbone keras_hub:PRESET`: train, evaluate, export to ONNX with parity,
reload; on TensorFlow here, on JAX and PyTorch in a fresh interpreter (PyTorch also exports)."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

pytest.importorskip("keras_hub")
ort = pytest.importorskip("onnxruntime")

from keras_dml_cli.entry import main  # noqa: E402
from tests.support.ci_rotation import rotating  # noqa: E402
from tests.support.paths import REPO_ROOT  # noqa: E402

IMAGES = np.random.default_rng(0).uniform(0, 255, (5, 32, 32, 3)).astype("float32")


def train_argv(preset, output):
    return [
        *("train", "--method", "abe", "--dataset", "digits", "--epochs", "1"),
        *("--backbone", f"keras_hub:{preset}", "--num-learners", "2", "--embedding-dim", "16"),
        *("--output", str(output), "--quiet"),
    ]


def check_trained_exports_and_reloads(run):
    metrics = json.loads((run / "metrics.json").read_text())
    assert 0.0 < metrics["recall@1"] <= 1.0 and metrics["num_queries"] > 0, metrics
    config = json.loads((run / "config.json").read_text())
    assert config["backbone"]["name"] == "keras_hub" and config["backbone"]["preset"]
    onnx_path = run / "model.onnx"
    argv = ["export", str(run / "model.keras"), "--format", "onnx", "--output", str(onnx_path)]
    assert main(argv) == 0
    reloaded = keras.saving.load_model(str(run / "model.keras"), safe_mode=True, compile=False)
    expected = reloaded.predict(IMAGES, verbose=0)
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    (exported,) = session.run(None, {"images": IMAGES})
    assert exported.shape == (5, 16)
    np.testing.assert_allclose(exported, expected, atol=1e-4)
    # The SavedModel export checks its own parity with the Keras model and fails past it.
    saved = ["export", str(run / "model.keras"), "--format", "saved_model", "--output"]
    assert main([*saved, str(run / "saved_model")]) == 0
    assert (run / "saved_model" / "saved_model.pb").is_file()


@pytest.mark.parametrize("family", ["vit", "resnet"])
def test_abe_trains_on_a_keras_hub_preset_and_exports_to_onnx(family, presets, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(train_argv(presets[family], run)) == 0, capsys.readouterr().err
    check_trained_exports_and_reloads(run)


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend_family", rotating(["jax-vit", "jax-resnet", "torch-vit", "torch-resnet"])
)
def test_abe_trains_on_other_backends_and_exports_on_tensorflow(backend_family, presets, tmp_path):
    backend, family = backend_family.split("-")
    run = tmp_path / "run"
    code = "import sys; from keras_dml_cli.entry import main; sys.exit(main(sys.argv[1:]))"
    env = dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=REPO_ROOT)
    result = subprocess.run(
        [sys.executable, "-c", code, *train_argv(presets[family], run)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    check_trained_exports_and_reloads(run)
    if backend == "torch":  # PyTorch's own ONNX exporter, on the same model
        export = ["export", str(run / "model.keras"), "--format", "onnx", "--output"]
        result = subprocess.run(
            [sys.executable, "-c", code, *export, str(run / "torch.onnx")],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        session = ort.InferenceSession(str(run / "torch.onnx"), providers=["CPUExecutionProvider"])
        (exported,) = session.run(None, {"images": IMAGES})
        reloaded = keras.saving.load_model(str(run / "model.keras"), safe_mode=True)
        np.testing.assert_allclose(exported, reloaded.predict(IMAGES, verbose=0), atol=1e-4)
