"""SoftTriple loss (Qian et al. 2019): softmax over classes each represented by K centers."""

import keras
from keras import ops

from keras_dml.losses.class_weights import (
    ClassWeightLoss,
    mean_over_samples,
    softmax_cross_entropy,
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
    """Relaxed class similarities `[B, C]`: `sum_k softmax_k(<x, w_c^k> / gamma) <x, w_c^k>`.

    References:
        Qian et al., "SoftTriple Loss", ICCV 2019, Eq. 7.
    """
    cosine = center_cosines(embeddings, centers, centers_per_class)
    if centers_per_class == 1:
        return cosine[:, :, 0]
    return ops.sum(ops.softmax(cosine / gamma, axis=2) * cosine, axis=2)


def center_spread(centers, centers_per_class):
    """The spread `sum_c sum_{t<s} ||w_c^t - w_c^s|| / (C K (K - 1))` of each class's unit centers.

    References:
        Qian et al., "SoftTriple Loss", ICCV 2019, Eq. 10.
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
    """SoftTriple: cross-entropy on `la (S'_{i,c} - margin [c = y_i])` plus `tau` times the spread.

    Args:
        centers: float tensor `[C * K, D]`; class `c`'s in rows `c*K .. c*K + K - 1`.
        centers_per_class: int >= 1. `K`. Defaults to `10`.
        la: float > 0. Scale `lambda`. Defaults to `20.0`.
        gamma: float > 0. Temperature over a class's centers. Defaults to `0.1`.
        margin: float. Margin `delta`. Defaults to `0.01`.
        tau: float >= 0. Weight of the center regulariser. Defaults to `0.2`.

    References:
        Qian, Shang, Sun, Hu, Li, Jin, "SoftTriple Loss: Deep Metric Learning Without Triplet
        Sampling", ICCV 2019, Eqs. 7, 8 and 10.
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
    loss, count = mean_over_samples(softmax_cross_entropy(logits, targets), invalid)
    if tau:
        # Only with samples: an empty batch gives 0.0, like every class loss.
        loss = loss + ops.where(count > 0, tau * center_spread(centers, centers_per_class), 0.0)
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("soft_triple")
@keras.saving.register_keras_serializable(package="keras_dml")
class SoftTripleLoss(ClassWeightLoss):
    """SoftTriple loss as a layer owning `num_classes * centers_per_class` trainable centers.

    Takes `soft_triple_loss`'s hyper-parameters and `ClassWeightLoss`'s arguments.
    """

    WEIGHTS_NAME = "centers"
    LOSS_ARGUMENTS = ("centers_per_class", "la", "gamma", "margin", "tau")
    VECTORS_PER_CLASS = "centers_per_class"
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
        self.la = float(la)
        self.gamma = float(gamma)
        self.margin = float(margin)
        self.tau = float(tau)
        super().__init__(num_classes, embedding_dim, **{"name": "soft_triple_loss", **kwargs})
