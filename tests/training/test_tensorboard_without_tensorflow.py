"""`train()` writes TensorBoard logs with `import tensorflow` blocked, or names what to install."""

import textwrap

import pytest

from tests.support.no_tensorflow import run_blocked

TINY_RUN = textwrap.dedent(
    """
    import os, sys, tempfile, warnings
    import numpy as np
    from keras_dml.data import from_arrays
    from keras_dml.training import train

    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(12), 6)
    images = rng.integers(0, 256, size=(len(labels), 32, 32, 3)).astype("uint8")
    splits = {split: from_arrays(images, labels, split=split, test_fraction=0.3, val_fraction=0.3)
              for split in ("train", "val", "test")}
    config = {"method": "baseline", "dataset": "arrays", "epochs": 1, "image_size": 32,
              "backbone": "convnet", "model": {"embedding_dim": 8}, "batch_size": 16,
              "m_per_class": 4, "optimizer": {"name": "adam", "learning_rate": 0.0025}}
    run = os.path.join(tempfile.mkdtemp(), "run")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = train(config, run, verbose=0, splits=splits, report=False)
    for warning in caught:
        print("WARNING", warning.message, flush=True)
    logs = os.path.join(run, "logs")
    """
)

READ_BACK = textwrap.dedent(
    """
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    def scalars(folder):
        assert any(name.startswith("events.out.tfevents") for name in os.listdir(folder)), folder
        accumulator = EventAccumulator(folder)
        accumulator.Reload()
        return {tag: [(e.step, e.value) for e in accumulator.Scalars(tag)]
                for tag in accumulator.Tags()["scalars"]}

    train_scalars = scalars(os.path.join(logs, "train"))
    validation = scalars(os.path.join(logs, "validation"))
    history = result["history"]
    np.testing.assert_allclose(train_scalars["epoch_loss"][0][1], history["loss"][0], rtol=1e-6)
    assert train_scalars["epoch_loss"][0][0] == 0, train_scalars
    np.testing.assert_allclose(train_scalars["epoch_learning_rate"][0][1], 0.0025, rtol=1e-6)
    np.testing.assert_allclose(validation["epoch_map@r"][0][1], history["val_map@r"][0], rtol=1e-6)
    assert "tensorflow" not in sys.modules, "tensorflow was imported"
    print("TENSORBOARD-LOGS-WITHOUT-TENSORFLOW", sorted(train_scalars))
    """
)


def test_torch_run_writes_tensorboard_scalars_with_tensorflow_blocked(tmp_path):
    pytest.importorskip("tensorboard", reason="torch.utils.tensorboard needs tensorboard")
    result = run_blocked(tmp_path, "torch", TINY_RUN + READ_BACK, timeout=120)
    assert "TENSORBOARD-LOGS-WITHOUT-TENSORFLOW" in result.stdout, (
        result.stdout[-2000:] + result.stderr[-4000:]
    )
    assert "WARNING TensorBoard" not in result.stdout


NO_WRITER = textwrap.dedent(
    """
    import sys
    sys.modules["torch.utils.tensorboard"] = None  # import fails: neither writer is installed
    sys.modules["tensorboardX"] = None
    """
)


def test_without_a_writer_one_warning_names_the_package(tmp_path):
    code = NO_WRITER + TINY_RUN + 'print("LOGS", os.path.exists(logs))\n'
    result = run_blocked(tmp_path, "jax", code, timeout=120)
    assert "LOGS False" in result.stdout, result.stdout[-2000:] + result.stderr[-4000:]
    lines = [line for line in result.stdout.splitlines() if "TensorBoard" in line]
    assert len(lines) == 1, result.stdout
    assert "writes no logs/" in lines[0] and lines[0].endswith(
        "pip install tensorboardX to get them."
    )
