"""Every method trains on JAX and PyTorch with `import tensorflow` blocked.

Each check runs in a fresh interpreter whose `sitecustomize` blocks `tensorflow`
(`tests.support.no_tensorflow.run_blocked`) and ends with `"tensorflow" not in sys.modules`, so a
training path that imports TensorFlow, at module level or inside a function, fails here. The
default suite runs a tiny Divide & Conquer on digits per backend: `keras_dml.training.train`
crashed in its second epoch, then `keras-dml train --config` resuming it from the backup
(divisions on the `keras.utils.PyDataset` pipeline, validation, test evaluation, report, `.keras`
reload with `safe_mode`). The slow suite trains every registered method through `train`.
"""

import os
import textwrap

import pytest

from keras_dml.methods import list_methods
from tests.support.no_tensorflow import run_blocked

DIVIDE_AND_CONQUER_RUN = textwrap.dedent(
    """
    import json, math, os, sys, tempfile
    # As .ci/run's JAX lines: XLA's LLVM level 0 cuts a third of the compile time of tiny runs.
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = flags + " --xla_backend_optimization_level=0"
    import numpy as np
    import keras
    from keras_dml_cli import main
    from keras_dml.methods.division.embedding_pass import (
        cached_inputs, compiled_forward, embed_training_set)
    from keras_dml.training import load_splits, train
    from keras_dml.training.strategy import make_strategy
    from tests.support.resume_script import CONFIG, kill_switch

    options = {**CONFIG["method_options"], "recluster_every": 1, "epoch_length": 3,
               "conquer_epoch": None, "log_learner_recall": True}
    config = {**CONFIG, "epochs": 2, "method_options": options}
    root = tempfile.mkdtemp()
    run = os.path.join(root, "run")

    # keras_dml.training.train, crashed by an exception at batch 1 of epoch 1 ...
    class Crash(Exception):
        pass

    def crash():
        raise Crash()

    try:
        train(config, run, verbose=0, extra_callbacks=[kill_switch("1:1", crash)])
        raise AssertionError("the crash callback did not stop the run")
    except Crash:
        pass
    crashed = json.load(open(os.path.join(run, "history.json")))
    assert crashed["epoch"] == [0], crashed

    # ... resumed at epoch 1 by `keras-dml train --config` on the same folder: epoch 0's entry
    # (its division time included) is the crashed run's, so epoch 0 was not trained again.
    with open(os.path.join(root, "dc.json"), "w") as handle:
        json.dump(config, handle)
    assert main(["train", "--config", handle.name, "--output", run, "--quiet"]) == 0
    history = json.load(open(os.path.join(run, "history.json")))
    assert history["epoch"] == [0, 1], history
    assert history["dc_recluster_seconds"][0] == crashed["dc_recluster_seconds"][0], history
    assert history["dc_division"] == [1.0, 2.0], history
    assert all(map(math.isfinite, history["val_map@r"])), history
    assert all(map(math.isfinite, history["dc_learner_1_recall@1"])), history
    metrics = json.load(open(os.path.join(run, "metrics.json")))
    assert math.isfinite(metrics["map@r"]) and metrics["num_queries"] > 0, metrics
    assert os.path.isfile(os.path.join(run, "report.html"))
    assert os.path.isfile(os.path.join(run, "best.keras"))
    reloaded = keras.saving.load_model(os.path.join(run, "model.keras"), safe_mode=True)
    images = np.random.default_rng(0).uniform(0, 255, (4, 32, 32, 3)).astype("float32")
    assert np.isfinite(reloaded.predict(images, verbose=0)).all()

    # The embedding pass keeps a small training set as arrays and re-reads a large one.
    train_data = load_splits(json.load(open(os.path.join(run, "config.json"))))["train"]
    forward = compiled_forward(reloaded, features=False)
    cached = cached_inputs(train_data, 256)
    streamed = cached_inputs(train_data, 256, cache_bytes=0)
    assert isinstance(cached, tuple) and isinstance(streamed, keras.utils.PyDataset)
    np.testing.assert_allclose(
        embed_training_set(forward, streamed, train_data.labels),
        embed_training_set(forward, cached, train_data.labels),
        atol=1e-6,
    )

    try:
        make_strategy("mirrored")
        raise AssertionError("a tf.distribute strategy was built without TensorFlow")
    except ValueError as error:
        assert "needs KERAS_BACKEND=tensorflow" in str(error), error
    assert "tensorflow" not in sys.modules, "tensorflow was imported"
    print("TRAINED-WITHOUT-TENSORFLOW")
    """
)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_divide_and_conquer_crashes_and_resumes_from_the_cli_with_tensorflow_blocked(
    tmp_path, backend
):
    result = run_blocked(tmp_path, backend, DIVIDE_AND_CONQUER_RUN, timeout=600)
    assert "TRAINED-WITHOUT-TENSORFLOW" in result.stdout, result.stderr[-4000:]


EVERY_METHOD_RUN = textwrap.dedent(
    """
    import math, os, sys, tempfile
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = flags + " --xla_backend_optimization_level=0"
    import numpy as np
    import keras
    from keras_dml.data import from_arrays
    from keras_dml.methods import get_method, list_methods
    from keras_dml.training import train

    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(12), 5)
    colours = rng.integers(0, 256, size=(12, 1, 1, 3))
    noise = rng.integers(-40, 40, size=(len(labels), 32, 32, 3))
    images = np.clip(colours[labels] + noise, 0, 255).astype("uint8")
    splits = {split: from_arrays(images, labels, split=split, val_fraction=0.2)
              for split in ("train", "val", "test")}
    root = tempfile.mkdtemp()
    chosen = os.environ.get("BLOCKED_TEST_METHODS")
    for method in chosen.split(",") if chosen else list_methods():
        config = {"method": method, "dataset": "arrays", "epochs": 2, "image_size": 32,
                  "backbone": {"name": "convnet"}, "model": dict(get_method(method).tiny),
                  "batch_size": 16, "m_per_class": 4}
        output = os.path.join(root, method)
        result = train(config, output, verbose=0, splits=splits)
        assert len(result["history"]["val_map@r"]) == 2, (method, result["history"])
        assert all(map(math.isfinite, result["history"]["loss"])), method
        assert math.isfinite(result["metrics"]["map@r"]), (method, result["metrics"])
        assert os.path.isfile(result["report"]), method
        keras.saving.load_model(os.path.join(output, "best.keras"), safe_mode=True)
        print("TRAINED", method, flush=True)
    assert "tensorflow" not in sys.modules, "tensorflow was imported"
    print("EVERY-METHOD-TRAINED-WITHOUT-TENSORFLOW")
    """
)


def methods_of(backend, ci_budget):
    """Every method on each backend; under the CI budget each method on one of the two
    (alternating, so both backends and every method are covered in each CI run)."""
    methods = list_methods()
    if not ci_budget:
        return methods
    return methods[0::2] if backend == "jax" else methods[1::2]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_every_method_trains_with_tensorflow_blocked(tmp_path, backend, monkeypatch):
    methods = methods_of(backend, bool(os.environ.get("KERAS_DML_CI_BUDGET")))
    monkeypatch.setenv("BLOCKED_TEST_METHODS", ",".join(methods))
    result = run_blocked(tmp_path, backend, EVERY_METHOD_RUN, timeout=900)
    assert "EVERY-METHOD-TRAINED-WITHOUT-TENSORFLOW" in result.stdout, (
        result.stdout[-2000:] + result.stderr[-4000:]
    )


def test_under_the_ci_budget_each_method_runs_on_one_backend():
    jax, torch = methods_of("jax", True), methods_of("torch", True)
    assert sorted(jax + torch) == sorted(list_methods()) and jax and torch
    assert methods_of("torch", False) == list_methods()
