"""`RetrievalEvaluation`: Keras callback writing retrieval metrics into the epoch logs."""

import keras

from keras_dml.evaluation.evaluate import METRICS, evaluate
from keras_dml.serving.embed import embed


class RetrievalEvaluation(keras.callbacks.Callback):
    """Embeds a validation split after an epoch and adds its metrics to the epoch's `logs`.

    Keys are `prefix + name` (`val_recall@1`, `val_map@r`, ...): put this callback before those
    that read them (`ModelCheckpoint`, `EarlyStopping`); docs/evaluation.md has more.

    Args:
        dataset: validation data `keras_dml.evaluation.embed` takes (the gallery with
            `query_dataset`).
        every_n_epochs: int. Evaluate after every n-th epoch. Defaults to `1`.
        prefix: str. Prefix of the log keys. Defaults to `"val_"`.
        recall_at: sequence of int. K values of Recall@K. Defaults to `(1, 2, 4, 8)`.
        metrics: subset of `METRICS`. Defaults to all.
        query_dataset: the queries of a query/gallery protocol, or `None`. Defaults to `None`.
        batch_size: int. Batch size for arrays or `ImageDataset`s. Defaults to `256`.
        verbose: int. 1 prints the metrics and shows progress bars. Defaults to `0`.
        **evaluate_kwargs: passed to `evaluate`.

    Examples:
    >>> import keras, numpy as np
    >>> x = np.random.rand(32, 8).astype("float32"); y = np.repeat(np.arange(8), 4)
    >>> model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
    >>> model.compile(optimizer="adam", loss="mse")
    >>> callback = RetrievalEvaluation((x, y), recall_at=(1,), metrics=("recall",))
    >>> _ = model.fit(x, np.zeros((32, 4)), epochs=1, verbose=0, callbacks=[callback])
    >>> sorted(callback.history)
    ['epoch', 'val_recall@1']
    """

    def __init__(
        self,
        dataset,
        every_n_epochs=1,
        prefix="val_",
        recall_at=(1, 2, 4, 8),
        metrics=METRICS,
        query_dataset=None,
        batch_size=256,
        verbose=0,
        **evaluate_kwargs,
    ):
        super().__init__()
        if not isinstance(every_n_epochs, int) or every_n_epochs < 1:
            raise ValueError(
                "`every_n_epochs` must be a positive integer. "
                f"Received: every_n_epochs={every_n_epochs!r}"
            )
        unknown = [name for name in metrics if name not in METRICS]
        if unknown:
            raise ValueError(f"`metrics` must be a subset of {METRICS}. Received: {tuple(metrics)}")
        self.dataset = dataset
        self.query_dataset = query_dataset
        self.every_n_epochs = every_n_epochs
        self.prefix = prefix
        self.recall_at = tuple(recall_at)
        self.metrics = tuple(metrics)
        self.batch_size = batch_size
        self.verbose = verbose
        self.evaluate_kwargs = evaluate_kwargs
        self.history = {"epoch": []}

    def _embed(self, data):
        embeddings, labels = embed(self.model, data, self.batch_size, verbose=bool(self.verbose))
        if labels is None:
            raise ValueError(
                "RetrievalEvaluation needs labelled data: `(images, labels)` elements."
            )
        return embeddings, labels

    def evaluate_now(self):
        """Embeds the validation data with the current model and returns `evaluate`'s dict."""
        embeddings, labels = self._embed(self.dataset)
        queries, query_labels = (None, None)
        if self.query_dataset is not None:
            queries, query_labels = self._embed(self.query_dataset)
        elif len(labels) < 2:
            classes = sorted({int(label) for label in labels})
            raise ValueError(
                f"The validation split ({self.prefix!r} metrics) holds {len(labels)} image(s), of "
                f"class(es) {classes}: retrieval needs at least 2. Give it more images (a larger "
                "val_fraction, or more images per class)."
            )
        return evaluate(
            embeddings,
            labels,
            queries,
            query_labels,
            recall_at=self.recall_at,
            metrics=self.metrics,
            **self.evaluate_kwargs,
        )

    def on_epoch_end(self, epoch, logs=None):
        if (epoch + 1) % self.every_n_epochs != 0:
            return
        results = self.evaluate_now()
        values = {
            f"{self.prefix}{name}": float(value)
            for name, value in results.items()
            if not name.startswith("num_") and not isinstance(value, str)
        }
        if logs is not None:
            logs.update(values)
        self.history["epoch"].append(epoch)
        for key, value in values.items():
            self.history.setdefault(key, []).append(value)
        if self.verbose:
            text = " - ".join(f"{key}: {value:.4f}" for key, value in values.items())
            print(f"\nEpoch {epoch + 1}: {text}")
