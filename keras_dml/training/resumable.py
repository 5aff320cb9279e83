"""Callbacks whose record survives an interrupted and resumed run: best value and history."""

import json
import math
import os
import time
import warnings

import keras

# The checkpoint-selection rule of every run: Recall@1 saturates on small validation splits.
SELECTION_METRIC = "val_map@r"


class BestCheckpoint(keras.callbacks.ModelCheckpoint):
    """`ModelCheckpoint(save_best_only=True)` whose best value survives in `<filepath>.json`.

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
    """Warns when a resumed run's Keras-layer `augmentation` cannot replay its random draws."""
    if isinstance(config.get("augmentation"), dict):
        warnings.warn(
            "Resuming with a Keras-layer `augmentation` pipeline: its random layers start their "
            "generators over, so this run will not end exactly as an uninterrupted one; use a "
            "named augmentation (e.g. 'crop_flip') for exact resumes.",
            stacklevel=2,
        )


class HistoryFile(keras.callbacks.Callback):
    """Writes every epoch's logs and `epoch_seconds` to a JSON file, keeping earlier runs' epochs.

    Args:
        path: str. The JSON file: metric name -> list of values, plus `"epoch"`.
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
        """Seconds the file's finished epochs took in earlier runs (not this instance's)."""
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
