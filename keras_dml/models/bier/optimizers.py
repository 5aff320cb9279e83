"""BIER's two optimizers: the embedding heads at a scaled learning rate (10x), the rest as set."""


def scaled_copy(optimizer, multiplier):
    """A fresh optimizer of the same class and settings with `learning_rate * multiplier`.

    Keras 3 has no per-variable learning rate; `BIER.train_step` applies this copy to the
    embedding heads and the original to everything else, like the two Adam optimizers of the
    authors' code. The copy's slot variables are not part of the model, so `.keras` files do not
    store them (a resumed run restarts the heads' moment estimates).

    Args:
        optimizer: a built-in or registered `keras.optimizers.Optimizer` with a float
            learning rate.
        multiplier: float. Learning-rate factor; `1.0` needs no copy.

    Returns:
        A new optimizer, or `None` when `multiplier == 1`.

    Raises:
        ValueError: for a learning-rate schedule or a non-positive multiplier.

    Examples:
    >>> import keras
    >>> scaled_copy(keras.optimizers.Adam(1e-5), 10.0).get_config()["learning_rate"]
    0.0001...

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 4 (embedding layer at a
        10x learning rate, as in the authors' code).
    """
    multiplier = float(multiplier)
    if multiplier <= 0:
        raise ValueError(
            f"`embedding_lr_multiplier` must be > 0. Received: embedding_lr_multiplier={multiplier}"
        )
    if multiplier == 1.0:
        return None
    config = optimizer.get_config()
    learning_rate = config.get("learning_rate")
    if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)):
        raise ValueError(
            "`embedding_lr_multiplier` needs a float learning rate; for a schedule, give the heads "
            f"their own schedule instead. Received: learning_rate={learning_rate!r}"
        )
    config["learning_rate"] = float(learning_rate) * multiplier
    config["name"] = f"{config.get('name', 'optimizer')}_embedding"
    return type(optimizer).from_config(config)


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
