"""ABE's losses (Kim et al., ECCV 2018): the contrastive loss (Eq. 10) and divergence (Eq. 9)."""

from keras import ops

from keras_dml.losses.contrastive import contrastive_loss

DIVERGENCE_PAIRS = ("self", "all")


def abe_contrastive_loss(labels, embeddings, margin=1.0, return_count=False):
    """Contrastive loss of one learner on squared Euclidean distances (Eq. 10).

    Args:
        labels: int tensor `[B]`.
        embeddings: float tensor `[B, D]`. The learner's L2-normalised embedding.
        margin: float. `m_c`. Defaults to `1.0`.
        return_count: bool. Also return the int32 number of pairs. Defaults to `False`.

    Returns:
        float32 scalar (0.0 without a positive or a negative pair), or `(loss, num_pairs)`.
    """
    # The library's contrastive loss in its squared-distance form is this equation, so a
    # baseline trained with it (`{"name": "contrastive", "similarity": "squared_euclidean"}`)
    # trains the same loss as ABE's learners.
    return contrastive_loss(
        labels, embeddings, margin, similarity="squared_euclidean", return_count=return_count
    )


def divergence_loss(learner_embeddings, margin=1.0, pairs="self"):
    """Divergence loss: hinge on the squared distance between learners' embeddings (Eq. 9).

    Args:
        learner_embeddings: list of M float tensors `[B, d]`. Normalised learner embeddings.
        margin: float. `m_div`. Defaults to `1.0`.
        pairs: str. `"self"` (the same image, the paper) or `"all"` (every image pair).
            Defaults to `"self"`.

    Returns:
        float32 scalar, the mean over images and learner pairs; 0.0 for fewer than two learners.
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
