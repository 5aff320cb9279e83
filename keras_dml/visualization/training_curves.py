"""`plot_training_curves`: losses and validation retrieval metrics per epoch (`history.json`)."""

import json
import os

import numpy as np

from keras_dml.utils import optional_import
from keras_dml.visualization._common import category_colors, new_figure
from keras_dml.visualization.fonts import use_fallback_fonts

# Validation metrics of `keras_dml.evaluation.RetrievalEvaluation`, drawn when present.
_RETRIEVAL_PREFIXES = ("val_recall@", "val_map@r", "val_r_precision", "val_nmi")


def load_history(history):
    """A history dict from a dict, a `history.json` path or a run folder (`ValueError` if none)."""
    if isinstance(history, (str, os.PathLike)):
        path = os.fspath(history)
        if os.path.isdir(path):
            path = os.path.join(path, "history.json")
        if not os.path.isfile(path):
            raise ValueError(
                f"No training history at {path}; pass a run folder written by "
                "`keras-dml train` (it holds history.json) or a history dict."
            )
        with open(path) as f:
            history = json.load(f)
    if hasattr(history, "history"):  # a keras.callbacks.History
        history = history.history
    if not isinstance(history, dict) or not all(isinstance(v, list) for v in history.values()):
        raise ValueError(
            "A training history is a dict of per-epoch lists (keras History.history). "
            f"Received: {type(history).__name__}"
        )
    return history


def plot_training_curves(history, eval_every=1, ax=None):
    """Two panels: the training losses, and the validation retrieval metrics, per epoch.

    Args:
        history: dict of per-epoch lists, a `keras.callbacks.History`, a `history.json` path
            or a run folder.
        eval_every: int. Epochs between validation evaluations. Defaults to `1`.
        ax: a sequence of two matplotlib Axes. Defaults to `None` (a new figure).

    Returns:
        `matplotlib.figure.Figure`.

    Raises:
        ValueError: a history without any loss or validation metric, or a bad `eval_every`.
        MissingDependencyError: matplotlib is not installed (`keras-dml[vis]`).
    """
    history = load_history(history)
    if not isinstance(eval_every, (int, np.integer)) or eval_every < 1:
        raise ValueError(f"`eval_every` must be a positive integer. Received: {eval_every!r}")
    losses = sorted(k for k in history if k.endswith("loss") and not k.startswith("val_"))
    metrics = sorted(k for k in history if k.startswith(_RETRIEVAL_PREFIXES))
    if not losses and not metrics:
        raise ValueError(
            "The history holds no loss and no validation retrieval metric. "
            f"Received keys: {sorted(history)}"
        )
    figure, axes = new_figure(2, ax, (5.0, 3.5), "plot_training_curves")
    ticker = optional_import("matplotlib.ticker", feature="plot_training_curves")
    panels = (
        (axes[0], losses, 1, "training loss"),
        (axes[1], metrics, int(eval_every), "validation retrieval"),
    )
    last_epoch = max(
        [len(history[k]) for k in losses] + [int(eval_every) * len(history[k]) for k in metrics]
    )
    for axis, keys, step, title in panels:
        for color, key in zip(category_colors(max(len(keys), 1)), keys):
            values = np.asarray(history[key], dtype=np.float64)
            epochs = step * np.arange(1, len(values) + 1)
            axis.plot(epochs, values, marker="o", markersize=3, color=color, label=key)
        axis.set_xlabel("epoch")
        axis.set_xlim(0.5, last_epoch + 0.5)
        if last_epoch <= 12:  # one tick per epoch (a locator would add 0.5 steps)
            axis.set_xticks(range(1, last_epoch + 1))
        else:
            axis.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        axis.set_title(title)
        axis.grid(alpha=0.3)
        if keys:
            axis.legend(fontsize=8)
        else:
            axis.text(0.5, 0.5, "not logged", ha="center", va="center", transform=axis.transAxes)
    return use_fallback_fonts(figure)
