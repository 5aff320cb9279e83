"""The registry of training methods: how to build, compile and feed each model family.

A method is a `MethodSpec` with three hooks that `keras_dml.training.run.train` calls in order:
`build(config, backbone) -> model`, `compile(config, model)`, and
`prepare(config, model, train_data, val_data) -> (train_dataset, callbacks)`. Methods whose
package is heavy register by import path and are loaded on first use.
"""

import dataclasses
import difflib
import importlib
import inspect


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """How `keras-dml train --method NAME` builds and trains a model family.

    Args:
        name: str. The CLI name.
        description: str. One line for `keras-dml train --help` and the README table.
        build: callable `(config, backbone) -> keras.Model`.
        prepare: callable `(config, model, train_data, val_data) -> (tf.data.Dataset, callbacks)`.
            Defaults to class-balanced m-per-class batches and no extra callback.
        compile: callable `(config, model) -> None`. Defaults to `compile_with_config`.
        uses_state_dir: bool. The method keeps training state on disk (e.g. D&C's cluster
            assignments); `train` then sets `method_options["state_dir"]` inside the run folder
            so that resuming an interrupted run restores it.
        learners_option: str. The `model` argument that `--num-learners` sets. Defaults to
            `"num_learners"`.
        classes_per_learner: int. Training classes each learner needs (D&C: 2, every cluster
            forms positive and negative pairs); `train` then caps an unset learner count to the
            data. Defaults to `0` (the learner count does not depend on the classes).
    """

    name: str
    description: str
    build: object
    prepare: object = None
    compile: object = None
    uses_state_dir: bool = False
    learners_option: str = "num_learners"
    classes_per_learner: int = 0


def build_optimizer(config):
    """Builds the Keras optimizer named in `config["optimizer"]` (`name` + keyword arguments).

    Raises:
        ValueError: for an unknown optimizer name or an argument the optimizer does not take;
            the message names the accepted arguments.
    """
    import keras

    options = dict(config["optimizer"])
    name = options.pop("name", "adam")
    try:
        optimizer_class = type(keras.optimizers.get(name))
    except ValueError as error:
        raise ValueError(
            f"Unknown optimizer {name!r} in the run configuration (any keras.optimizers name, "
            f"e.g. 'adam', 'adamw', 'sgd'). Received: optimizer={config['optimizer']}"
        ) from error
    check_arguments(optimizer_class, options, f"optimizer {name!r}", "optimizer")
    return optimizer_class(**options)


def check_arguments(callable_, options, what, entry):
    """Raises a `ValueError` naming the keys of `options` that `callable_` does not accept.

    Args:
        callable_: a class or function.
        options: dict of keyword arguments about to be passed.
        what: str. What is being built, for the message (e.g. `"loss 'margin'"`).
        entry: str. The configuration entry holding the options (e.g. `"loss"`).
    """
    parameters = inspect.signature(callable_).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        if not isinstance(callable_, type):
            return
        # A class forwarding **kwargs to its base: accept the base classes' named arguments.
        names = set()
        for klass in callable_.__mro__:
            if "__init__" in vars(klass):
                names |= set(inspect.signature(klass.__init__).parameters)
    else:
        names = set(parameters)
    names -= {"self", "args", "kwargs"}
    unknown = sorted(set(options) - names)
    if unknown:
        close = {key: difflib.get_close_matches(key, sorted(names), n=1) for key in unknown}
        hints = ", ".join(f"{key!r} -> {match[0]!r}" for key, match in close.items() if match)
        hint = f" Did you mean {hints}?" if hints else ""
        raise ValueError(
            f"Unknown argument(s) {unknown} for the {what} in the `{entry}` entry of the run "
            f"configuration.{hint} Accepted: {sorted(names)}."
        )


DEFAULT_LOSS = {"name": "margin"}
# Batch of the inference passes over the training set before a re-clustering: forward only, so a
# larger batch than training's keeps the division overhead low (D&C target: <= 15% of an epoch).
EMBEDDING_BATCH = 256


def build_loss(config, default=None):
    """Builds the loss named in `config["loss"]` (or `default`) through `keras_dml.losses.get`.

    Args:
        config: resolved run configuration.
        default: dict. The method's loss when `config["loss"]` is `None`. Defaults to the
            margin loss with distance-weighted sampling (Wu et al. 2017).
    """
    from keras_dml import losses

    options = dict(config["loss"] or default or DEFAULT_LOSS)
    if "name" not in options:
        raise ValueError(f"The `loss` entry needs a `name`. Received: loss={config['loss']}")
    name = options.pop("name")
    check_loss_entry({"name": name, **options})
    return losses.get(name, **options)


def check_loss_entry(entry):
    """Checks a `loss` entry (`{"name": ..., **arguments}`) against the named loss.

    Every method passes the entry to `keras_dml.losses.get` (directly or through its model), so
    a misspelt argument is caught here, before a model is built.

    Args:
        entry: dict. The `loss` entry of a run configuration.

    Raises:
        ValueError: for a missing or unknown name, or an argument the loss does not take; the
            message names the accepted arguments and the closest match.
    """
    from keras_dml.losses import registry

    if not isinstance(entry, dict) or "name" not in entry:
        raise ValueError(
            'The `loss` entry needs a `name`, e.g. {"name": "margin", "margin": 0.2}. '
            f"Received: loss={entry!r}"
        )
    options = dict(entry)
    name = options.pop("name")
    key = str(name).strip().lower().replace("-", "_")
    known = getattr(registry, "LOSSES", None)
    if known is None:
        return
    if key not in known:
        close = difflib.get_close_matches(key, sorted(known), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"Unknown loss {name!r}.{hint} Known names: {sorted(known)}.")
    check_arguments(known[key], options, f"loss {name!r}", "loss")


def compile_with_config(config, model):
    """Compiles `model` with the configuration's optimizer and loss."""
    model.compile(optimizer=build_optimizer(config), loss=build_loss(config))


def with_batch_composition(config, labels):
    """`config` with unset `batch_size` / `m_per_class` fitted to `labels` (a copy if changed)."""
    if config["batch_size"] is not None and config["m_per_class"] is not None:
        return config
    from keras_dml.training.fit_to_data import fit_batch_composition, usable_classes

    batch_size, m = fit_batch_composition(
        config["batch_size"], config["m_per_class"], usable_classes(labels)
    )
    return {**config, "batch_size": batch_size, "m_per_class": m}


def m_per_class_batches(config, model, train_data, val_data):
    """Class-balanced training batches: `batch_size / m_per_class` classes x `m_per_class`."""
    from keras_dml.data import MPerClassSampler

    config = with_batch_composition(config, train_data.labels)
    sampler = MPerClassSampler(
        train_data.labels,
        m=config["m_per_class"],
        batch_size=config["batch_size"],
        seed=config["seed"],
    )
    dataset = train_data.as_tf_dataset(
        training=True,
        batch_size=config["batch_size"],
        sampler=sampler,
        image_size=config["image_size"],
        seed=config["seed"],
    )
    return dataset, []


def cluster_batches(config, train_data, epoch_length=None):
    """Batches drawn within one cluster at a time (Divide & Conquer and its hierarchical form).

    Args:
        config: resolved run configuration (`batch_size`, `m_per_class`, `image_size`, `seed`).
        train_data: training `ImageDataset`.
        epoch_length: int or `None`. Batches per epoch, fixed so that Keras knows every epoch's
            length although re-clustering changes the clusters. Defaults to `None`: training
            samples // batch size.

    Returns:
        `(sampler, dataset)`: a `ClusterMPerClassSampler` starting with one cluster (the method's
        callback replaces its assignment) and the `tf.data.Dataset` of
        `(images, {"labels", "clusters"})` it drives.
    """
    import numpy as np

    from keras_dml.data import ClusterMPerClassSampler

    config = with_batch_composition(config, train_data.labels)
    if epoch_length is None:
        epoch_length = max(1, len(train_data.labels) // config["batch_size"])
    sampler = ClusterMPerClassSampler(
        train_data.labels,
        np.zeros((len(train_data.labels),), np.int64),
        m=config["m_per_class"],
        batch_size=config["batch_size"],
        seed=config["seed"],
        epoch_length=int(epoch_length),
    )
    dataset = train_data.as_tf_dataset(
        training=True,
        batch_size=config["batch_size"],
        sampler=sampler,
        image_size=config["image_size"],
        seed=config["seed"],
        with_clusters=True,
    )
    return sampler, dataset


def _build_baseline(config, backbone):
    from keras_dml.models import EmbeddingModel

    return EmbeddingModel(backbone, **config["model"])


def _compile_baseline(config, model):
    if config["method_options"]:
        raise ValueError(
            "The baseline takes no method_options (its settings are `model`, `loss`, "
            f"`optimizer`). Received: method_options={config['method_options']}"
        )
    compile_with_config(config, model)


_METHODS = {
    "baseline": MethodSpec(
        name="baseline",
        description="single embedding: backbone, pooling, linear layer, L2 (the reference point)",
        build=_build_baseline,
        compile=_compile_baseline,
    ),
}

# Methods defined in their own packages: name -> "module:attribute" of a MethodSpec.
_LAZY_METHODS = {
    "dc": "keras_dml.models.divide_and_conquer.training:METHOD",
    "bier": "keras_dml.models.bier.recipe:METHOD",
    "dcml": "keras_dml.models.dcml.spec:DCML_SPEC",
    "abe": "keras_dml.models.abe.spec:ABE_SPEC",
    "mheads": "keras_dml.models.abe.spec:MHEADS_SPEC",
    "hdc": "keras_dml.models.hierarchical_divide_and_conquer.spec:HDC_SPEC",
}


def register_method(spec, overwrite=False):
    """Adds a `MethodSpec` to the registry (e.g. a research variant from user code)."""
    if spec.name in _METHODS and not overwrite:
        raise ValueError(f"A method named {spec.name!r} is registered already.")
    _METHODS[spec.name] = spec


def list_methods():
    """Names of every training method, sorted."""
    return sorted(set(_METHODS) | set(_LAZY_METHODS))


def get_method(name):
    """Returns the `MethodSpec` called `name`, with a suggestion for a misspelt name."""
    if name not in _METHODS and name in _LAZY_METHODS:
        module_name, attribute = _LAZY_METHODS[name].split(":")
        _METHODS[name] = getattr(importlib.import_module(module_name), attribute)
    if name not in _METHODS:
        close = difflib.get_close_matches(str(name), list_methods(), n=3)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"Unknown method {name!r}.{hint} Known methods: {list_methods()}.")
    spec = _METHODS[name]
    return dataclasses.replace(
        spec,
        prepare=spec.prepare or m_per_class_batches,
        compile=spec.compile or compile_with_config,
    )
