"""`HistoryFile` times each epoch, so a resumed run reports the whole training's seconds."""

import json

from keras_dml.training.resumable import HistoryFile


def run_epochs(callback, epochs):
    for epoch in epochs:
        callback.on_epoch_begin(epoch)
        callback.on_epoch_end(epoch, {"loss": float(epoch)})


def test_resumed_file_counts_only_the_epochs_an_earlier_run_finished(tmp_path):
    path = tmp_path / "history.json"
    run_epochs(HistoryFile(str(path)), [0, 1, 2])  # interrupted during epoch 3
    earlier = json.loads(path.read_text())
    # Known times for the earlier run's epochs, so the sum is exact.
    earlier["epoch_seconds"] = [10.0, 20.0, 40.0]
    path.write_text(json.dumps(earlier))

    resumed = HistoryFile(str(path))
    run_epochs(resumed, [2, 3])  # BackupAndRestore resumes at epoch 2's start
    history = resumed.history()
    assert history["epoch"] == [0, 1, 2, 3]
    assert history["epoch_seconds"][:2] == [10.0, 20.0]
    # Epoch 2 ran again here: its earlier time is replaced, and the caller times it.
    assert resumed.earlier_seconds() == 30.0


def test_fresh_run_has_no_earlier_seconds(tmp_path):
    history = HistoryFile(str(tmp_path / "history.json"))
    run_epochs(history, [0, 1])
    assert history.earlier_seconds() == 0.0
    assert all(s >= 0.0 for s in history.history()["epoch_seconds"])
