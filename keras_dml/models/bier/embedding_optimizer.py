"""The update step of BIER with two optimizers: one for the embedding heads, one for the rest."""


def apply_split_gradients(optimizer, embedding_optimizer, heads, gradients, variables):
    """Applies the heads' gradients with `embedding_optimizer` and the others with `optimizer`.

    Variables without a gradient are skipped. With `embedding_optimizer=None` (learning-rate
    multiplier 1) every gradient goes to `optimizer`.

    Args:
        optimizer: `keras.optimizers.Optimizer` of the backbone (and every non-head variable).
        embedding_optimizer: `keras.optimizers.Optimizer` or `None`, the heads' optimizer from
            `scaled_copy`.
        heads: list of layers, the embedding heads (learners).
        gradients: list of gradients (or `None`), aligned with `variables`.
        variables: list of the model's trainable variables.

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 4 (embedding layer at a
        10x learning rate, as in the authors' code).
    """
    head_ids = set()
    if embedding_optimizer is not None:
        head_ids = {id(v) for head in heads for v in head.trainable_variables}
    groups = ([], [])
    for gradient, variable in zip(gradients, variables):
        if gradient is not None:
            groups[id(variable) in head_ids].append((gradient, variable))
    if groups[0]:
        optimizer.apply(*zip(*groups[0]))
    if groups[1]:
        embedding_optimizer.apply(*zip(*groups[1]))
