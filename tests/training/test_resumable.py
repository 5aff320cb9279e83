"""`BestCheckpoint` and `HistoryFile` keep their record across a restart."""

import json
import warnings

import keras
import numpy as np
import pytest

from keras_dml.training.resumable import (
    SELECTION_METRIC,
    BestCheckpoint,
    HistoryFile,
    warn_inexact_resume,
)


def tiny_model():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_best_checkpoint_remembers_its_best_value_after_a_restart(tmp_path):
    path = str(tmp_path / "best.keras")
    model = tiny_model()
    first = BestCheckpoint(path)
    first.set_model(model)
    first.on_epoch_end(0, {SELECTION_METRIC: 0.8})
    saved_at = (tmp_path / "best.keras").stat().st_mtime_ns
    assert json.loads((tmp_path / "best.keras.json").read_text())["value"] == 0.8

    resumed = BestCheckpoint(path)  # a new process: the value comes from best.keras.json
    assert resumed.best == 0.8
    resumed.set_model(model)
    resumed.on_epoch_end(1, {SELECTION_METRIC: 0.5})  # worse: best.keras must stay
    assert (tmp_path / "best.keras").stat().st_mtime_ns == saved_at
    resumed.on_epoch_end(2, {SELECTION_METRIC: 0.9})
    record = json.loads((tmp_path / "best.keras.json").read_text())
    assert record == {"monitor": SELECTION_METRIC, "value": 0.9, "epoch": 2}


def test_history_file_keeps_earlier_epochs_and_replaces_repeated_ones(tmp_path):
    path = str(tmp_path / "history.json")
    first = HistoryFile(path)
    for epoch in range(3):
        first.on_epoch_end(epoch, {"loss": np.float32(1.0 - epoch / 10)})
    resumed = HistoryFile(path)  # resumed at epoch 2 (its first run was cut mid-epoch 2)
    resumed.on_epoch_end(2, {"loss": 0.5, "val_map@r": 0.7})
    resumed.on_epoch_end(3, {"loss": 0.4, "val_map@r": 0.8})
    history = resumed.history()
    assert history["epoch"] == [0, 1, 2, 3]
    np.testing.assert_allclose(history["loss"], [1.0, 0.9, 0.5, 0.4], rtol=1e-6)
    assert history["val_map@r"] == [None, None, 0.7, 0.8]


def test_best_checkpoint_skips_epochs_without_evaluation_quietly(tmp_path):
    """With `eval_every` > 1 most epochs log no validation metric: no Keras warning for each of
    them, a save at the evaluated epoch, and one warning only when no epoch was evaluated."""
    import warnings

    import pytest

    x, y = np.ones((8, 2), "float32"), np.ones((8, 1), "float32")
    path = str(tmp_path / "best.keras")

    class EvaluateLastEpoch(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 2:
                logs[SELECTION_METRIC] = 0.5

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        tiny_model().fit(
            x, y, epochs=3, verbose=0, callbacks=[EvaluateLastEpoch(), BestCheckpoint(path)]
        )
    assert json.loads((tmp_path / "best.keras.json").read_text())["epoch"] == 2

    never = str(tmp_path / "never.keras")
    with pytest.warns(UserWarning, match="No epoch logged 'val_map@r'.*eval_every"):
        tiny_model().fit(x, y, epochs=2, verbose=0, callbacks=[BestCheckpoint(never)])


def test_resuming_with_a_keras_layer_augmentation_warns_that_it_is_not_exact():
    pipeline = keras.saving.serialize_keras_object(
        keras.Sequential([keras.layers.RandomRotation(0.1)])
    )
    with pytest.warns(UserWarning, match="will not end exactly as an uninterrupted one"):
        warn_inexact_resume({"augmentation": pipeline})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_inexact_resume({"augmentation": "crop_flip"})
        warn_inexact_resume({"augmentation": None})
