"""Callbacks whose record survives an interrupted and resumed run (`keras-dml train` twice).

`keras.callbacks.BackupAndRestore` restores the weights, the optimizer and the epoch counter, but
a new `ModelCheckpoint` starts with no best value (so the first epoch after a resume overwrites
`best.keras` even when it is worse) and a new `History` holds only the epochs of the current
`fit` call. `BestCheckpoint` and `HistoryFile` keep both on disk next to the run's files.
"""

import json
import math
import os
import time
import warnings

import keras

# The checkpoint-selection rule of every keras-dml run (train, recipes, demo): validation MAP@R
# on held-out training classes. Recall@1 saturates at 1.0 on small validation splits (digits:
# after the first epoch), so it cannot tell a good epoch from a better one; MAP@R keeps ranking.
SELECTION_METRIC = "val_map@r"


class BestCheckpoint(keras.callbacks.ModelCheckpoint):
    """`ModelCheckpoint(save_best_only=True)` that remembers its best value across restarts.

    The best monitored value and its epoch are written to `<filepath>.json` whenever the model
    is saved; a new instance (a resumed run) starts from that value instead of from nothing.

    Args:
        filepath: str. Where the best model goes (`.keras`).
        monitor: str. Log key to maximise. Defaults to `SELECTION_METRIC` (`"val_map@r"`).

    Examples:
    >>> checkpoint = BestCheckpoint("runs/x/best.keras")  # doctest: +SKIP
    >>> model.fit(data, epochs=5, callbacks=[evaluation, checkpoint])  # doctest: +SKIP
    """

    def __init__(self, filepath, monitor=SELECTION_METRIC):
        super().__init__(filepath, monitor=monitor, mode="max", save_best_only=True)
        self.record_path = f"{filepath}.json"
        record = _read_json(self.record_path)
        if record and record.get("monitor") == monitor and os.path.exists(filepath):
            self.best = float(record["value"])

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        self._monitored_epochs = 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor not in (logs or {}):
            return  # an epoch without evaluation (`eval_every` > 1): nothing to compare
        self._monitored_epochs = getattr(self, "_monitored_epochs", 0) + 1
        previous = self.best
        super().on_epoch_end(epoch, logs)
        if self.best != previous and math.isfinite(self.best):
            _write_json(
                self.record_path, {"monitor": self.monitor, "value": self.best, "epoch": epoch}
            )

    def on_train_end(self, logs=None):
        super().on_train_end(logs)
        if getattr(self, "_monitored_epochs", 0) == 0:
            warnings.warn(
                f"No epoch logged {self.monitor!r}, so {self.filepath} was not written; "
                "evaluate on the validation split at least once (eval_every <= epochs).",
                stacklevel=2,
            )


def warn_inexact_resume(config):
    """Warns when a resumed run cannot draw what the interrupted run drew.

    The named augmentations (`"crop_flip"`, ...) take their seeds from `(seed, epoch, step)`,
    but a Keras-layer pipeline (`config["augmentation"]` a serialized `keras.Sequential`) keeps
    its own generators in the input pipeline, outside the checkpoint: a resumed run then crops
    (rotates, ...) otherwise, and ends near the uninterrupted run rather than on it.

    Args:
        config: dict. The resolved run configuration of the resumed run.
    """
    if isinstance(config.get("augmentation"), dict):
        warnings.warn(
            "Resuming with a Keras-layer `augmentation` pipeline: its random layers start their "
            "generators over, so this run will not end exactly as an uninterrupted one; use a "
            "named augmentation (e.g. 'crop_flip') for exact resumes.",
            stacklevel=2,
        )


class HistoryFile(keras.callbacks.Callback):
    """Writes every epoch's logs to a JSON file as it ends, keeping the epochs of earlier runs.

    After a resume, epochs from the resumed epoch on replace what an interrupted run wrote for
    them, so the file always holds one entry per finished epoch, in order. Each entry also holds
    `"epoch_seconds"`, the epoch's wall time, so a resumed run can count the training time of the
    epochs an earlier run finished (`earlier_seconds`).

    Args:
        path: str. The JSON file (`history.json`): a dict of metric name -> list of values, plus
            `"epoch"`, the epoch index of each entry.
    """

    def __init__(self, path):
        super().__init__()
        self.path = path
        self.epochs_run = set()
        self._epoch_start = None

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        rows = [row for row in _rows(_read_json(self.path) or {}) if row["epoch"] < epoch]
        row = {"epoch": epoch, **{k: _plain(v) for k, v in (logs or {}).items()}}
        if self._epoch_start is not None:
            row["epoch_seconds"] = time.perf_counter() - self._epoch_start
        rows.append(row)
        _write_json(self.path, _columns(rows))
        self.epochs_run.add(epoch)

    def history(self):
        """The file's history: dict of metric name -> list (one value per finished epoch)."""
        return _read_json(self.path) or {}

    def earlier_seconds(self):
        """Seconds the file's epochs took in earlier, interrupted runs (0.0 for a fresh run).

        The epochs this instance saw end are left out: the caller times those itself. The part
        of an epoch an interrupted run lost is not counted, as the resumed run trains it again.
        """
        history = self.history()
        seconds = history.get("epoch_seconds", [])
        return float(
            sum(
                value or 0.0
                for epoch, value in zip(history.get("epoch", []), seconds)
                if epoch not in self.epochs_run
            )
        )


def _rows(history):
    epochs = history.get("epoch", [])
    return [
        {key: values[i] for key, values in history.items() if i < len(values)}
        for i in range(len(epochs))
    ]


def _columns(rows):
    keys = []
    for row in rows:
        keys += [key for key in row if key not in keys]
    return {key: [row.get(key) for row in rows] for key in keys}


def _plain(value):
    try:
        return value.item()
    except AttributeError:
        return float(value) if not isinstance(value, (int, float, str)) else value


def _read_json(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def _write_json(path, data):
    temporary = f"{path}.tmp"
    with open(temporary, "w") as f:
        json.dump(data, f, indent=2)
    os.replace(temporary, path)
