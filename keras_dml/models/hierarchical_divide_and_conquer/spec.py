"""How configuration-driven runs (`training/train.py`, `keras-dml train`) build and fit HDC.

`HDC_SPEC` is the `MethodSpec` for `"method": "hdc"`; register it with
`register_method(HDC_SPEC)` or the lazy entry
`"hdc": "keras_dml.models.hierarchical_divide_and_conquer.spec:HDC_SPEC"`.

`config["model"]` holds the constructor arguments of `HierarchicalDivideAndConquer`;
`config["method_options"]` the callback's options below.
"""

from keras_dml.training.methods import EMBEDDING_BATCH, MethodSpec, cluster_batches

# `method_options` of an HDC run configuration and their defaults (TPAMI 2021, Tab. 9 / Sec. 3).
METHOD_DEFAULTS = {
    "division_every": 2,
    "finetune_epoch": None,
    "cluster_on": "embedding",
    "freeze_backbone": True,
    "split_attempts": 30,
    # Batches per epoch; constant because tf.data fixes the epoch length on the first epoch and
    # the number of clusters changes. None: training samples // batch_size.
    "epoch_length": None,
    "kmeans_niter": 100,
    "kmeans_nredo": 5,
    "similarity": "iou",
}


def method_options(config):
    """The HDC `method_options` of `config` with defaults; unknown keys raise a `ValueError`."""
    options = dict(config.get("method_options") or {})
    unknown = sorted(set(options) - set(METHOD_DEFAULTS))
    if unknown:
        raise ValueError(f"Unknown HDC method_options {unknown}. Known: {sorted(METHOD_DEFAULTS)}.")
    return {**METHOD_DEFAULTS, **options}


def _train_size(config):
    from keras_dml.data import load_dataset

    data = load_dataset(
        config["dataset"],
        split="train",
        data_dir=config["data_dir"],
        image_size=config["image_size"],
        seed=config["seed"],
        **config["dataset_options"],
    )
    return len(data.labels)


def build_model(config, backbone, train_data=None):
    """`HierarchicalDivideAndConquer(backbone, **config["model"])`.

    When `config["model"]` has no `num_train_samples`, it is the size of `train_data` (the split
    `keras_dml.training.train` passes, e.g. in-memory `from_arrays` data), or without it the
    training split named by the configuration is loaded once to count it, so the cluster
    assignment becomes model state (checkpoints carry it).

    Args:
        config: resolved run configuration.
        backbone: `keras.Model`.
        train_data: training `ImageDataset` or `None`.

    Returns:
        A `HierarchicalDivideAndConquer` model.
    """
    from keras_dml.models.hierarchical_divide_and_conquer.model import (
        HierarchicalDivideAndConquer,
    )

    options = dict(config["model"])
    if options.get("num_train_samples") is None:
        options["num_train_samples"] = (
            len(train_data.labels) if train_data is not None else _train_size(config)
        )
    return HierarchicalDivideAndConquer(backbone, **options)


def prepare_data(config, model, train_data, val_data):
    """Cluster-conditioned batches and the division callback.

    Args:
        config: resolved run configuration.
        model: the `HierarchicalDivideAndConquer` model.
        train_data: training `ImageDataset`.
        val_data: unused (validation metrics come from the run's `RetrievalEvaluation`).

    Returns:
        `(train_dataset, [HierarchicalDivideAndConquerCallback])`.
    """
    from keras_dml.models.hierarchical_divide_and_conquer.callback import (
        HierarchicalDivideAndConquerCallback,
    )

    del val_data
    options = method_options(config)
    sampler, dataset = cluster_batches(config, train_data, options["epoch_length"])
    callback = HierarchicalDivideAndConquerCallback(
        train_data,
        train_data.labels,
        sampler,
        division_every=options["division_every"],
        finetune_epoch=options["finetune_epoch"],
        cluster_on=options["cluster_on"],
        freeze_backbone=options["freeze_backbone"],
        split_attempts=options["split_attempts"],
        niter=options["kmeans_niter"],
        nredo=options["kmeans_nredo"],
        similarity=options["similarity"],
        seed=config["seed"],
        batch_size=max(EMBEDDING_BATCH, config["batch_size"]),
    )
    return dataset, [callback]


HDC_SPEC = MethodSpec(
    name="hdc",
    description="Hierarchical Divide & Conquer (TPAMI 2021): progressive 2-means division, "
    "soft masks per cluster, mask orthogonality loss",
    build=build_model,
    prepare=prepare_data,
    learners_option="max_learners",
    classes_per_learner=2,
)
