"""ABE's losses: the contrastive loss of Eq. 10 and the divergence loss of Eq. 9."""

from keras import ops

from keras_dml.losses.contrastive import contrastive_loss

DIVERGENCE_PAIRS = ("self", "all")


def abe_contrastive_loss(labels, embeddings, margin=1.0, return_count=False):
    """Contrastive loss of one learner on squared Euclidean distances (Eq. 10).

    `y_ij D_ij^2 + (1 - y_ij) [m_c - D_ij^2]_+` averaged over every positive and negative pair
    of the batch (the paper's 1/N over its sampled pairs). Note the hinge acts on the squared
    distance, unlike Hadsell et al.'s `max(0, m - D)^2`: this is
    `keras_dml.losses.contrastive_loss(..., similarity="squared_euclidean")`.

    Args:
        labels: int tensor `[B]`.
        embeddings: float tensor `[B, D]` (the learner's L2-normalised embedding).
        margin: float. `m_c`; the paper sets 1. Defaults to `1.0`.
        return_count: bool. Also return the int32 number of pairs. Defaults to `False`.

    Returns:
        float32 scalar (0.0 for a batch without a positive or a negative pair), or
        `(loss, num_pairs)`.

    Examples:
    >>> import numpy as np
    >>> loss = abe_contrastive_loss([0, 0, 1, 1], np.eye(4, dtype="float32"))

    References:
        Kim et al., "Attention-based Ensemble for Deep Metric Learning", ECCV 2018, Eq. 10.
    """
    # The library's contrastive loss in its squared-distance form is this equation, so a
    # baseline trained with it (`{"name": "contrastive", "similarity": "squared_euclidean"}`)
    # trains the same loss as ABE's learners.
    return contrastive_loss(
        labels, embeddings, margin, similarity="squared_euclidean", return_count=return_count
    )


def divergence_loss(learner_embeddings, margin=1.0, pairs="self"):
    """Divergence loss: hinge on the squared distance between learners' embeddings (Eq. 9).

    With `pairs="self"` (the paper), every image contributes
    `max(0, m_div - ||B_p(x_i) - B_q(x_i)||^2)` for each pair of learners `p < q`; the result
    is the mean over images and learner pairs (the paper writes a sum; the mean keeps
    `lambda_div = 1` meaningful for any batch size and M, alongside the averaged Eq. 10).
    `pairs="all"` (a third-party Keras version) also compares `B_p(x_i)` with `B_q(x_j)` for
    `i != j`.

    Args:
        learner_embeddings: list of M float tensors `[B, d]` (normalised learner embeddings).
        margin: float. `m_div`; the paper sets 1. Defaults to `1.0`.
        pairs: `"self"` or `"all"`. Defaults to `"self"`.

    Returns:
        float32 scalar; 0.0 for fewer than two learners.

    Examples:
    >>> import numpy as np
    >>> e = np.eye(2, dtype="float32")
    >>> float(divergence_loss([e, e]))  # identical learners: every self pair costs m_div
    1.0

    References:
        Kim et al., "Attention-based Ensemble for Deep Metric Learning", ECCV 2018, Eq. 8-9.
    """
    if pairs not in DIVERGENCE_PAIRS:
        raise ValueError(f"`pairs` must be one of {DIVERGENCE_PAIRS}. Received: pairs={pairs!r}")
    if len(learner_embeddings) < 2:
        return ops.convert_to_tensor(0.0, "float32")
    embeddings = [ops.cast(e, "float32") for e in learner_embeddings]
    terms = []
    for p in range(len(embeddings)):
        for q in range(p + 1, len(embeddings)):
            a, b = embeddings[p], embeddings[q]
            if pairs == "self":
                squared = ops.sum(ops.square(a - b), axis=-1)
            else:
                squared = (
                    ops.sum(ops.square(a), axis=-1)[:, None]
                    + ops.sum(ops.square(b), axis=-1)[None, :]
                    - 2.0 * ops.matmul(a, ops.transpose(b))
                )
                squared = ops.maximum(squared, 0.0)
            terms.append(ops.mean(ops.relu(float(margin) - squared)))
    return ops.mean(ops.stack(terms))
