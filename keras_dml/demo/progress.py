"""The demo's per-epoch progress line: method k of n, validation MAP@R, time left."""

import time

import keras


class DemoProgress(keras.callbacks.Callback):
    """Prints one line per epoch: method k of n, validation MAP@R and a time estimate.

    Args:
        method: str. The method being trained.
        index: int. Its position (0-based) among the demo's methods.
        count: int. Number of methods in the demo.
        epochs: int. Epochs of this method.
    """

    def __init__(self, method, index, count, epochs):
        super().__init__()
        self.method, self.index, self.count, self.epochs = method, index, count, epochs
        self.start = time.perf_counter()

    def on_train_begin(self, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        print(self.line(epoch, time.perf_counter() - self.start, logs), flush=True)

    def line(self, epoch, elapsed, logs=None):
        """The progress line after `epoch` (0-based), `elapsed` seconds into this method."""
        done = epoch + 1
        per_epoch = elapsed / done
        left_here = per_epoch * max(0, self.epochs - done)
        left_all = left_here + per_epoch * self.epochs * (self.count - self.index - 1)
        score = (logs or {}).get("val_map@r")
        score_text = f", val MAP@R {score:.3f}" if score is not None else ""
        return (
            f"[demo] {self.index + 1} of {self.count} {self.method}: epoch {done}/{self.epochs}"
            f"{score_text}, {per_epoch:.1f} s/epoch, about {left_here:.0f} s left for "
            f"{self.method}, {left_all:.0f} s for the demo"
        )
