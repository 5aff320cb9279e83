"""SoftTriple loss (Qian et al. 2019): softmax over classes each represented by K centers."""

import keras
from keras import ops

from keras_dml.losses.class_weights import (
    ClassWeightLoss,
    mean_over_samples,
)
from keras_dml.losses.multi_center import (
    center_cosines,
    check_centers_per_class,
    prepare_multi_center_inputs,
)
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import l2_normalize, one_hot_in_range, safe_sqrt
from keras_dml.pairs.reduction import finish


def check_soft_triple_arguments(la, gamma, tau):
    """Raises a one-line `ValueError` for a non-positive `la` or `gamma` or a negative `tau`."""
    for name, value in (("la", la), ("gamma", gamma)):
        if not value > 0:
            raise ValueError(
                f"`{name}` must be > 0 (the paper uses la=20, gamma=0.1). Received: {name}={value}"
            )
    if not tau >= 0:
        raise ValueError(f"`tau` must be >= 0 (0 turns the regulariser off). Received: tau={tau}")


def soft_triple_similarities(embeddings, centers, centers_per_class, gamma):
    """Relaxed class similarities `S'_{i,c} = sum_k softmax_k(<x_i, w_c^k> / gamma) <x_i, w_c^k>`.

    Args:
        embeddings: float32 tensor `[B, D]`.
        centers: float32 tensor `[C * K, D]` (class `c`: rows `c*K .. c*K + K - 1`).
        centers_per_class: int. `K`.
        gamma: float. Softmax temperature over a class's centers.

    Returns:
        float32 tensor `[B, C]`.
    """
    cosine = center_cosines(embeddings, centers, centers_per_class)
    if centers_per_class == 1:
        return cosine[:, :, 0]
    return ops.sum(ops.softmax(cosine / gamma, axis=2) * cosine, axis=2)


def center_spread(centers, centers_per_class):
    """The paper's regulariser: `sum_c sum_{t<s} ||w_c^t - w_c^s|| / (C K (K - 1))`.

    The centers are L2-normalised, so `||w_t - w_s|| = sqrt(2 - 2 <w_t, w_s>)`; the square root
    has a finite gradient where two centers coincide. 0.0 for `K = 1`.

    Args:
        centers: float32 tensor `[C * K, D]`.
        centers_per_class: int. `K`.

    Returns:
        float32 scalar.
    """
    if centers_per_class < 2:
        return ops.convert_to_tensor(0.0, "float32")
    num_classes = centers.shape[0] // centers_per_class
    unit = ops.reshape(l2_normalize(centers), (num_classes, centers_per_class, -1))
    cosine = ops.einsum("ctd,csd->cts", unit, unit)
    upper = ops.triu(ops.ones((centers_per_class, centers_per_class)), k=1) > 0.0
    distance = safe_sqrt(ops.maximum(2.0 - 2.0 * cosine, 0.0))
    total = ops.sum(ops.where(upper, distance, 0.0))
    return total / float(num_classes * centers_per_class * (centers_per_class - 1))


def soft_triple_loss(
    labels,
    embeddings,
    centers,
    centers_per_class=10,
    la=20.0,
    gamma=0.1,
    margin=0.01,
    tau=0.2,
    return_count=False,
):
    """SoftTriple: cross-entropy on `la (S'_{i,c} - margin [c = y_i])` plus a center regulariser.

    `S'_{i,c}` is the softmax-weighted similarity of `x_i` to the `K` centers of class `c`
    (Eq. 7, `soft_triple_similarities`); the loss of a sample is
    `-log( e^{la (S'_{i,y} - margin)}
    / (e^{la (S'_{i,y} - margin)} + sum_{c != y} e^{la S'_{i,c}}) )`
    (Eq. 8), averaged over the batch, plus `tau` times the spread of each class's centers
    (Eq. 10, `center_spread`), which lets the redundant centers merge.

    Args:
        labels: int tensor `[B]`. Class ids in `[0, C)`; others raise a `ValueError` in an eager
            call and give a NaN loss inside a traced graph.
        embeddings: float tensor `[B, D]`. Embeddings (normalised inside).
        centers: float tensor `[C * K, D]`; rows `c*K .. c*K + K - 1` are class `c`'s centers
            (normalised inside).
        centers_per_class: int >= 1. `K`. Defaults to `10` (the paper's choice).
        la: float > 0. Scale `lambda`. Defaults to `20.0`.
        gamma: float > 0. Temperature of the softmax over a class's centers. Defaults to `0.1`.
        margin: float. Margin `delta` on the target class. Defaults to `0.01`.
        tau: float >= 0. Weight of the regulariser. Defaults to `0.2`.
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_samples)`; 0.0 for an empty batch, NaN when an embedding
        holds NaN or Inf.

    Examples:
    >>> centers = keras.random.normal((10 * 4, 8))  # 10 classes, 4 centers each
    >>> loss = soft_triple_loss([0, 3, 3, 7], keras.random.normal((4, 8)), centers, 4)

    References:
        Qian, Shang, Sun, Hu, Li, Jin, "SoftTriple Loss: Deep Metric Learning Without Triplet
        Sampling", ICCV 2019, Eqs. 7, 8 and 10 (la = 20, gamma = 0.1, tau = 0.2, delta = 0.01,
        K = 10).
    """
    check_soft_triple_arguments(la, gamma, tau)
    labels, embeddings, centers, centers_per_class, num_classes, invalid = (
        prepare_multi_center_inputs(
            labels, embeddings, centers, centers_per_class, ("centers", "centers_per_class")
        )
    )
    similarities = soft_triple_similarities(embeddings, centers, centers_per_class, gamma)
    targets = one_hot_in_range(labels, num_classes)
    logits = la * (similarities - margin * targets)
    per_sample = ops.logsumexp(logits, axis=1) - ops.sum(targets * logits, axis=1)
    loss, count = mean_over_samples(per_sample, invalid)
    if tau:
        # Only with samples: an empty batch gives 0.0, like every class loss.
        loss = loss + ops.where(count > 0, tau * center_spread(centers, centers_per_class), 0.0)
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("soft_triple")
@keras.saving.register_keras_serializable(package="keras_dml")
class SoftTripleLoss(ClassWeightLoss):
    """SoftTriple loss as a layer owning `num_classes * centers_per_class` trainable centers.

    A class loss: the centers are a `[num_classes * centers_per_class, dim]` variable (rows
    `c*K .. c*K + K - 1` are class `c`'s), so an ensemble gives each learner its own centers by
    slicing the columns. The authors train the centers at 100x the network's learning rate
    (their code's `--modellr 1e-4 --centerlr 1e-2`): `recommended_lr_multipliers` below, which
    `keras_dml.training.train` applies unless the optimizer entry sets `lr_multipliers`.

    Args:
        num_classes: int. Number of training classes (labels in `[0, num_classes)`).
        embedding_dim: int. Dimension of the embeddings.
        centers_per_class: int >= 1. `K`. Defaults to `10`.
        la: float > 0. Scale `lambda`. Defaults to `20.0`.
        gamma: float > 0. Temperature over a class's centers. Defaults to `0.1`.
        margin: float. Margin `delta`. Defaults to `0.01`.
        tau: float >= 0. Weight of the center regulariser. Defaults to `0.2`.
        weights_initializer: initializer of the centers. Defaults to `"random_normal"`.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.

    Call arguments:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, embedding_dim]`. Embeddings.
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar loss, or `(loss, num_samples)`.

    Examples:
    >>> loss_layer = SoftTripleLoss(num_classes=100, embedding_dim=128)
    >>> model.compile(optimizer="adam", loss=loss_layer)  # model: an EmbeddingModel

    References:
        Qian et al., "SoftTriple Loss: Deep Metric Learning Without Triplet Sampling", ICCV 2019.
    """

    WEIGHTS_NAME = "centers"
    LOSS_ARGUMENTS = ("centers_per_class", "la", "gamma", "margin", "tau")
    loss_fn = staticmethod(soft_triple_loss)

    # The authors' code (github.com/idstcv/SoftTriple): centers at 1e-2, the network at 1e-4.
    recommended_lr_multipliers = {"centers$": 100.0}

    def __init__(
        self,
        num_classes=None,
        embedding_dim=None,
        centers_per_class=10,
        la=20.0,
        gamma=0.1,
        margin=0.01,
        tau=0.2,
        **kwargs,
    ):
        check_soft_triple_arguments(la, gamma, tau)
        self.centers_per_class = check_centers_per_class(
            centers_per_class, None, "centers_per_class"
        )
        kwargs.setdefault("name", "soft_triple_loss")
        super().__init__(num_classes, embedding_dim, **kwargs)
        self.la = float(la)
        self.gamma = float(gamma)
        self.margin = float(margin)
        self.tau = float(tau)

    def build(self, labels_shape=None, embeddings_shape=None):
        self.centers = self.add_weight(
            name=self.WEIGHTS_NAME,
            shape=(self.num_classes * self.centers_per_class, self.embedding_dim),
            initializer=self.weights_initializer,
            dtype="float32",
            trainable=True,
            autocast=False,
        )
