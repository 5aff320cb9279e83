"""The default hooks of a `MethodSpec`: optimizer, loss and class-balanced batches from a config."""

import keras


def build_optimizer(config):
    """Builds the Keras optimizer named in `config["optimizer"]` (`name` + keyword arguments)."""
    options = dict(config["optimizer"])
    name = options.pop("name", "adam")
    try:
        return keras.optimizers.get({"class_name": name, "config": options})
    except ValueError as error:
        raise ValueError(
            f"Unknown optimizer {name!r} in the run configuration (any keras.optimizers name, "
            f"e.g. 'adam', 'adamw', 'sgd'). Keras said: {error}"
        ) from error


DEFAULT_LOSS = {"name": "margin"}


def build_loss(config, default=None, embedding_dim=None):
    """Builds the loss named in `config["loss"]` (or `default`) through `keras_dml.losses.get`.

    Args:
        config: resolved run configuration.
        default: dict. The method's loss when `config["loss"]` is `None`. Defaults to the
            margin loss with distance-weighted sampling (Wu et al. 2017).
        embedding_dim: int or `None`. Size of the embeddings a class-based loss (proxies,
            class weights) receives, filled in when the config does not give it.
    """
    from keras_dml import losses

    options = losses.with_class_arguments(
        dict(config["loss"] or default or DEFAULT_LOSS), embedding_dim=embedding_dim
    )
    if "name" not in options:
        raise ValueError(f"The `loss` entry needs a `name`. Received: loss={config['loss']}")
    return losses.get(options.pop("name"), **options)


def compile_with_config(config, model):
    """Compiles `model` with the configuration's optimizer and loss."""
    loss = build_loss(config, embedding_dim=getattr(model, "embedding_dim", None))
    model.compile(optimizer=build_optimizer(config), loss=loss)


def m_per_class_batches(config, model, splits):
    """Class-balanced training batches: `batch_size / m_per_class` classes x `m_per_class`.

    Returns:
        `(tf.data.Dataset, [])` over `splits["train"]`.
    """
    train_data = splits["train"]
    from keras_dml.data import MPerClassSampler

    sampler = MPerClassSampler(
        train_data.labels,
        m=config["m_per_class"],
        batch_size=config["batch_size"],
        seed=config["seed"],
    )
    return sampled_batches(config, train_data, sampler), []


def build_augmentation(config):
    """The training augmentation of `config["augmentation"]` for `ImageDataset.as_tf_dataset`.

    Returns:
        `None` (the dataset's default), a name, or the Keras pipeline deserialized from its
        config dict.
    """
    augmentation = config.get("augmentation")
    if isinstance(augmentation, dict):
        return keras.saving.deserialize_keras_object(augmentation)
    return augmentation


def sampled_batches(config, train_data, sampler, with_clusters=False):
    """The augmented training `tf.data.Dataset` of `train_data` in `sampler`'s batch order.

    Args:
        config: resolved run configuration (`batch_size`, `image_size`, `seed`,
            `augmentation`).
        train_data: training `ImageDataset`.
        sampler: a batch sampler of `keras_dml.data`.
        with_clusters: bool. Targets `{"labels", "clusters"}` (cluster samplers). Defaults to
            `False`.
    """
    return train_data.as_tf_dataset(
        training=True,
        batch_size=config["batch_size"],
        sampler=sampler,
        image_size=config["image_size"],
        seed=config["seed"],
        with_clusters=with_clusters,
        augmentation=build_augmentation(config),
    )


def compile_optimizer_only(config, model):
    """Compiles with `config["optimizer"]` only, for models that compute their loss themselves.

    The method's `method_options` are checked first (ABE, M-heads and DCML take none).
    """
    from keras_dml.models.registry import get_method

    get_method(config["method"]).parse_options(config)
    model.compile(optimizer=build_optimizer(config))
