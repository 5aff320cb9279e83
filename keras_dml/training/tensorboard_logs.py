"""The run's TensorBoard logs (`logs/`): Keras' callback with TensorFlow, else a PyTorch or
tensorboardX writer."""

import os
import warnings

import keras


def tensorflow_summary_available():
    """Whether `tensorflow.summary` imports (always on the TensorFlow backend)."""
    if keras.backend.backend() == "tensorflow":
        return True
    try:
        import tensorflow.summary  # noqa: F401 (optional dependency: tensorflow, for the logs)
    except ImportError:
        return False
    return True


def _torch_writer():
    from torch.utils.tensorboard import SummaryWriter  # optional dependency: torch, tensorboard

    return SummaryWriter


def _tensorboardx_writer():
    from tensorboardX import SummaryWriter  # optional dependency: tensorboardX

    return SummaryWriter


def summary_writer_class(backend=None):
    """The `SummaryWriter` class of `torch.utils.tensorboard` or `tensorboardX`, or `None`.

    Args:
        backend: str or `None`. The Keras backend. Defaults to `keras.backend.backend()`.
    """
    backend = backend or keras.backend.backend()
    # torch's writer first on the torch backend; elsewhere tensorboardX, lighter than torch.
    writers = (_torch_writer, _tensorboardx_writer)
    for writer in writers if backend == "torch" else writers[::-1]:
        try:
            return writer()
        except ImportError:
            continue
    return None


class EpochScalars(keras.callbacks.Callback):
    """Each epoch's logs as scalars, in the layout of `keras.callbacks.TensorBoard`.

    Args:
        log_dir: str. The folder of the `train` and `validation` event files.
        writer_class: a `SummaryWriter` class (`torch.utils.tensorboard` or `tensorboardX`).
    """

    def __init__(self, log_dir, writer_class):
        super().__init__()
        self.log_dir = log_dir
        self.writer_class = writer_class
        self._writers = {}

    def _writer(self, name):
        if name not in self._writers:
            self._writers[name] = self.writer_class(os.path.join(self.log_dir, name))
        return self._writers[name]

    def on_epoch_end(self, epoch, logs=None):
        scalars = {"train": {}, "validation": {}}
        for key, value in (logs or {}).items():
            if key.startswith("val_"):
                scalars["validation"][key[4:]] = value
            else:
                scalars["train"][key] = value
        optimizer = getattr(self.model, "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # LossScaleOptimizer
        if isinstance(optimizer, keras.optimizers.Optimizer):
            rate = keras.ops.convert_to_numpy(optimizer.learning_rate)
            scalars["train"]["learning_rate"] = rate
        for name, values in scalars.items():
            for key, value in values.items():
                self._writer(name).add_scalar(f"epoch_{key}", float(value), epoch)
            if values:
                self._writer(name).flush()

    def on_train_end(self, logs=None):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}


def tensorboard_callbacks(output_dir):
    """The callback writing `output_dir/logs`, or `[]` with a warning naming what to install."""
    log_dir = os.path.join(output_dir, "logs")
    if tensorflow_summary_available():
        return [keras.callbacks.TensorBoard(log_dir, write_graph=False)]
    writer_class = summary_writer_class()
    if writer_class is not None:
        return [EpochScalars(log_dir, writer_class)]
    backend = keras.backend.backend()
    package = "tensorboard" if backend == "torch" else "tensorboardX"
    warnings.warn(
        f"TensorBoard logs without TensorFlow need torch.utils.tensorboard (with the tensorboard "
        f"package) or tensorboardX, neither of which imports, so this {backend} run writes no "
        f"logs/ (history.json has every epoch's values); pip install {package} to get them.",
        stacklevel=2,
    )
    return []
