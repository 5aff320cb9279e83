"""Every method on the JAX and PyTorch backends, and `.keras` files that cross backends.

Keras reads its backend at import, so these run in their own pytest invocation per backend
(`.ci/run`): `KERAS_BACKEND=torch python -m pytest -m backends tests/methods/test_backends.py`. On a
backend other than TensorFlow every registered method fits two steps (from `tf.data` and from
arrays) and evaluates; its `.keras` file then loads in a TensorFlow process with the same outputs,
where export (SavedModel / ONNX) runs.
"""

import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from tests.support import backend_fit_script
from tests.support.paths import REPO_ROOT

pytestmark = pytest.mark.backends
ROOT = REPO_ROOT

LOAD_ON_TENSORFLOW = """
import sys
import keras
import numpy as np
import keras_dml.models  # registers the classes

out = sys.argv[1]
probe = np.load(f"{out}/probe.npy")
for name in sys.argv[2].split(","):
    model = keras.saving.load_model(f"{out}/{name}.keras", safe_mode=True)
    expected = np.load(f"{out}/{name}.npy")
    np.testing.assert_allclose(model(probe).numpy(), expected, rtol=1e-4, atol=1e-5)
    print("LOADED", name, flush=True)
# The saving backend's optimizer class is read by its public name: loading a PyTorch-saved file
# does not import torch (Keras imports jax itself when it is installed, so only torch is checked).
assert "torch" not in sys.modules, "loading imported torch"
"""


@pytest.mark.skipif(
    keras.backend.backend() == "tensorflow",
    reason="run with KERAS_BACKEND=jax or torch (the TensorFlow suite covers TensorFlow)",
)
def test_every_method_fits_evaluates_and_loads_on_tensorflow(tmp_path):
    from keras_dml.methods import list_methods

    backend_fit_script.main(str(tmp_path))
    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    names = ",".join(list_methods())
    result = subprocess.run(
        [sys.executable, "-c", LOAD_ON_TENSORFLOW, str(tmp_path), names],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert result.stdout.count("LOADED") == len(list_methods())
    for name in list_methods():
        assert np.isfinite(np.load(tmp_path / f"{name}.npy")).all()


@pytest.mark.skipif(
    keras.backend.backend() == "tensorflow",
    reason="run with KERAS_BACKEND=jax or torch (the TensorFlow suite covers TensorFlow)",
)
@pytest.mark.parametrize("method", ["dc", "hdc"])
def test_divisions_run_through_train_on_this_backend(method, tmp_path):
    """`keras_dml.training.train` with the division callbacks (embedding pass, k-means)."""
    from keras_dml.data.datasets import from_arrays
    from keras_dml.training import train

    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(12), 6)
    images = (rng.random((labels.size, 32, 32, 3)) * 255).astype("uint8")
    splits = {
        split: from_arrays(images, labels, split=split, test_fraction=0.3, val_fraction=0.3)
        for split in ("train", "val", "test")
    }
    learners = {"dc": {"num_learners": 2}, "hdc": {"max_learners": 2}}[method]
    every = {"dc": "recluster_every", "hdc": "division_every"}[method]
    config = {
        "method": method,
        "dataset": "arrays",
        "epochs": 2,
        "batch_size": 8,
        "m_per_class": 2,
        "model": {"embedding_dim": 16, **learners},
        "loss": {"name": "contrastive"},
        "method_options": {every: 1, "kmeans_nredo": 1},
    }
    result = train(config, str(tmp_path / method), 0, (), splits)
    assert 0.0 < result["metrics"]["recall@1"] <= 1.0
    assert len(result["history"]["loss"]) == 2
