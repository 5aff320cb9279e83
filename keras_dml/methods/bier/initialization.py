"""Sec. 3.3.1: initialise BIER's embedding matrix from a diversity loss on fixed features."""

import keras
import numpy as np
from keras import ops

from keras_dml.data.batch_streams import is_batch_stream, iterate_batches
from keras_dml.layers.diversity import get_diversity


class _DiversityFit(keras.Model):
    """The heads' kernels and a diversity layer as a model trained on `L_div` of fixed features."""

    def __init__(self, kernels, layer):
        super().__init__(name="bier_initialization")
        self.kernels = list(kernels)
        self.diversity_layer = layer
        self.built = True

    def call(self, features):
        return [ops.matmul(features, ops.cast(w, "float32")) for w in self.kernels]

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return self.diversity_layer(list(y_pred), kernels=self.kernels)


def _features_of(model, data, batch_size):
    """Pooled backbone features `[N, h]` of precomputed features, images or a dataset."""
    if is_batch_stream(data):
        chunks = []
        for element in iterate_batches(data):
            images = element[0] if isinstance(element, (tuple, list)) else element
            chunks.append(ops.convert_to_numpy(model.features(images, training=False)))
        if not chunks:
            raise ValueError("The dataset given to initialize_bier_embedding is empty.")
        return np.concatenate(chunks).astype("float32")
    data = np.asarray(data, dtype="float32")
    if data.ndim == 2:
        if data.shape[1] != model.feature_dim:
            raise ValueError(
                f"Precomputed features must have {model.feature_dim} columns (the backbone's "
                f"pooled size). Received shape {data.shape}."
            )
        return data
    if data.ndim == 4:
        chunks = [
            ops.convert_to_numpy(model.features(data[i : i + batch_size], training=False))
            for i in range(0, len(data), batch_size)
        ]
        return np.concatenate(chunks).astype("float32")
    raise ValueError(
        "`features_or_dataset` must be features [N, h], images [N, H, W, 3] or a batched dataset "
        f"of images or (images, labels). Received an array of shape {data.shape}."
    )


def initialize_bier_embedding(
    model,
    features_or_dataset,
    diversity="activation",
    epochs=10,
    batch_size=256,
    learning_rate=1e-3,
    momentum=0.9,
    clipnorm=1.0,
    lambda_weight=None,
    seed=0,
    verbose=0,
):
    """Initialises a `BIER` model's embedding kernels by SGD on the diversity loss alone.

    Args:
        model: `BIER`, or any `EmbeddingModel` with two or more heads.
        features_or_dataset: pooled features `[N, h]`, images `[N, H, W, 3]` or a batched dataset.
        diversity: str. `"activation"` (Eq. 6) or `"adversarial"` (Eq. 9). Defaults to the first.
        epochs: int. Passes over the features. Defaults to `10`.
        batch_size: int. Defaults to `256`.
        learning_rate: float. SGD learning rate. Defaults to `1e-3`.
        momentum: float. SGD momentum. Defaults to `0.9`.
        clipnorm: float or `None`. Per-variable gradient-norm clipping. Defaults to `1.0`.
        lambda_weight: float or `None`. Unit-norm penalty weight. Defaults to the model's.
        seed: int. Shuffling seed. Defaults to `0`.
        verbose: int. 1 prints the loss after every epoch. Defaults to `0`.

    Returns:
        list of float, the mean diversity loss of every epoch.

    Examples:
    >>> history = initialize_bier_embedding(model, train_images, diversity="activation")
    >>> model.compile(optimizer="adam"); model.fit(train_ds)  # doctest: +SKIP

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 3.3.1, Eq. 10; Table 6.
    """
    if len(getattr(model, "heads", [])) < 2:
        raise ValueError("initialize_bier_embedding needs a model with at least two heads.")
    if int(epochs) < 1 or int(batch_size) < 1:
        raise ValueError(
            f"`epochs` and `batch_size` must be >= 1. Received: {epochs}, {batch_size}"
        )
    features = _features_of(model, features_or_dataset, int(batch_size))
    if lambda_weight is None:
        lambda_weight = getattr(model, "lambda_weight", 100.0)
    layer = getattr(model, "diversity_layer", None)
    if layer is None or getattr(model, "diversity", None) != diversity:
        layer = get_diversity(
            diversity,
            [head.units for head in model.heads],
            lambda_weight=lambda_weight,
            hidden_units=getattr(model, "regressor_units", 512),
        )
    fitter = _DiversityFit([head.kernel for head in model.heads], layer)
    fitter.compile(
        optimizer=keras.optimizers.SGD(
            learning_rate=learning_rate, momentum=momentum, clipnorm=clipnorm
        )
    )

    def step(batch):
        fitter.reset_metrics()  # the logged loss is then this batch's
        return float(fitter.train_on_batch(batch))

    rng = np.random.default_rng(seed)
    history = []
    for epoch in range(int(epochs)):
        order = rng.permutation(len(features))
        losses = [
            step(features[order[i : i + batch_size]])
            for i in range(0, len(features), int(batch_size))
        ]
        history.append(float(np.mean(losses)))
        if verbose:
            print(f"BIER initialisation {epoch + 1}/{epochs}: {diversity} loss {history[-1]:.6f}")
    return history
