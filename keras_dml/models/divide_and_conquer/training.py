"""How configuration-driven runs (`training/train.py`, `keras-dml train`) build and fit D&C.

`METHOD` is the `MethodSpec` the training registry loads for `"method": "dc"`;
`build_divide_and_conquer_training(config, train_data, val_data, backbone)` does everything in one
call for scripts that do not use the registry.
"""

from keras_dml.training.methods import (
    EMBEDDING_BATCH,
    MethodSpec,
    cluster_batches,
    compile_with_config,
)

# `method_options` of a D&C run configuration and their defaults (CVPR 2019, Sec. 4.2).
METHOD_DEFAULTS = {
    "recluster_every": 2,
    "conquer_epoch": None,
    "conquer_sampling": "clusters",
    "cluster_on": "embedding",
    # Batches per epoch. The pipeline fixes the dataset's cardinality when it is built, so the
    # default is a constant (training samples // batch_size) rather than the sampler's "max"/"min",
    # which change with every re-clustering.
    "epoch_length": None,
    "kmeans_niter": 100,
    "kmeans_nredo": 5,
    "similarity": "iou",
    "state_dir": None,
    "log_learner_recall": True,
}


def method_options(config):
    """The D&C `method_options` of `config`, with defaults; unknown keys raise a `ValueError`."""
    options = dict(config.get("method_options") or {})
    unknown = sorted(set(options) - set(METHOD_DEFAULTS))
    if unknown:
        raise ValueError(f"Unknown D&C method_options {unknown}. Known: {sorted(METHOD_DEFAULTS)}.")
    return {**METHOD_DEFAULTS, **options}


def build_model(config, backbone):
    """`DivideAndConquer(backbone, **config["model"])` (K = `model.num_learners`, default 4)."""
    from keras_dml.models.divide_and_conquer.model import DivideAndConquer

    return DivideAndConquer(backbone, **config["model"])


def prepare_data(config, model, train_data, val_data):
    """Cluster-conditioned training batches and the re-clustering callback.

    Args:
        config: resolved run configuration (`batch_size`, `m_per_class`, `image_size`, `seed`,
            `method_options`).
        model: the `DivideAndConquer` model.
        train_data: training `ImageDataset`.
        val_data: validation `ImageDataset` or `None` (per-learner Recall@1 at each division).

    Returns:
        `(train_dataset, [DivideAndConquerCallback])`: a `tf.data.Dataset` of
        `(images, {"labels", "clusters"})` whose batches follow the sampler the callback updates.
    """
    from keras_dml.models.divide_and_conquer.callback import DivideAndConquerCallback

    options = method_options(config)
    sampler, dataset = cluster_batches(config, train_data, options["epoch_length"])
    callback = DivideAndConquerCallback(
        train_data,
        train_data.labels,
        sampler,
        recluster_every=options["recluster_every"],
        conquer_epoch=options["conquer_epoch"],
        conquer_sampling=options["conquer_sampling"],
        cluster_on=options["cluster_on"],
        val_data=val_data if options["log_learner_recall"] else None,
        niter=options["kmeans_niter"],
        nredo=options["kmeans_nredo"],
        similarity=options["similarity"],
        seed=config["seed"],
        state_dir=options["state_dir"],
        batch_size=max(EMBEDDING_BATCH, config["batch_size"]),
    )
    return dataset, [callback]


def build_divide_and_conquer_training(config, train_data, val_data=None, backbone=None):
    """Builds, compiles and wires a D&C model from a resolved run configuration.

    Args:
        config: dict. A configuration resolved by `keras_dml.training.resolve_config`.
        train_data: training `ImageDataset`.
        val_data: validation `ImageDataset` or `None`.
        backbone: `keras.Model` or `None` to build `config["backbone"]` at `config["image_size"]`.

    Returns:
        `(model, fit_kwargs)`; train with `model.fit(**fit_kwargs)` (`x`, `epochs`, `callbacks`).

    Examples:
    >>> # config = keras_dml.training.load_config("training/configs/dc_fashion_mnist.json")
    >>> # model, fit_kwargs = build_divide_and_conquer_training(config, train, val)
    >>> # model.fit(**fit_kwargs)
    """
    if backbone is None:
        from keras_dml import backbones

        options = dict(config["backbone"])
        size = config["image_size"]
        backbone = backbones.get(options.pop("name"), input_shape=(size, size, 3), **options)
    model = build_model(config, backbone)
    compile_with_config(config, model)
    dataset, callbacks = prepare_data(config, model, train_data, val_data)
    return model, {"x": dataset, "epochs": config["epochs"], "callbacks": callbacks}


METHOD = MethodSpec(
    name="dc",
    description="Divide & Conquer (CVPR 2019): K learners on K k-means clusters, re-clustered "
    "every T epochs, then merged",
    build=build_model,
    prepare=prepare_data,
    uses_state_dir=True,
    classes_per_learner=2,
)
