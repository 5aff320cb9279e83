"""A `MethodSpec`'s default `compile` and `prepare` hooks, and the builders methods share."""

import inspect

import keras

from keras_dml import losses
from keras_dml.data import MPerClassSampler, SamplerEpochCallback
from keras_dml.losses import registry
from keras_dml.methods.registry import get_method
from keras_dml.optimizers import with_multipliers
from keras_dml.utils.suggestions import did_you_mean, did_you_mean_keys


def build_optimizer(config):
    """The Keras optimizer of `config["optimizer"]`, wrapped for its `lr_multipliers`.

    Raises:
        ValueError: for an unknown optimizer name or argument.
    """
    options = dict(config["optimizer"])
    name = options.pop("name", "adam")
    multipliers = options.pop("lr_multipliers", None)
    optimizer_class = find_optimizer_class(name, config["optimizer"])
    check_arguments(optimizer_class, options, f"optimizer {name!r}", "optimizer")
    optimizer = optimizer_class(**options)
    if multipliers is None:
        return optimizer
    if not isinstance(multipliers, dict):
        raise ValueError(
            "`optimizer.lr_multipliers` must map variable-path patterns to learning-rate "
            f'factors, e.g. {{"proxies$": 100.0}}. Received: lr_multipliers={multipliers!r}'
        )
    return with_multipliers(optimizer, multipliers)


def find_optimizer_class(name, entry):
    """The Keras optimizer class that `keras.optimizers.get(name)` builds, without building it.

    Raises:
        ValueError: for an unknown name, with the closest known one.
    """
    # Looked up by name, never built: building an optimizer creates its `iterations` variable,
    # which starts TensorFlow's runtime, and a `MultiWorkerMirroredStrategy` created after that
    # fails ("Collective ops must be configured at program startup").
    found = keras.saving.get_registered_object(name) if isinstance(name, str) else None
    if found is None and isinstance(name, str):
        found = optimizer_classes().get(name.lower())
    if found is None:
        raise ValueError(
            f"Unknown optimizer {name!r} in the run configuration."
            f"{did_you_mean(name, optimizer_names())} Use any keras.optimizers name, e.g. "
            f"'adam', 'adamw', 'sgd'. Received: optimizer={entry}"
        )
    return found


def optimizer_classes():
    """`{lower-case name: class}` of the optimizers `keras.optimizers` exports."""
    return {
        name.lower(): value
        for name, value in vars(keras.optimizers).items()
        if isinstance(value, type)
        and issubclass(value, keras.optimizers.Optimizer)
        and value not in (keras.optimizers.Optimizer, keras.optimizers.LossScaleOptimizer)
    }


def optimizer_names():
    """The names `keras.optimizers.get` takes: its optimizer classes' names in lower case."""
    return sorted(optimizer_classes())


def accepted_arguments(callable_):
    """The keyword arguments `callable_` accepts (a class's bases' too), or `None` for any."""
    parameters = inspect.signature(callable_).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        if not isinstance(callable_, type):
            return None
        names = set()
        for klass in callable_.__mro__:
            if "__init__" in vars(klass):
                names |= set(inspect.signature(klass.__init__).parameters)
    else:
        names = set(parameters)
    return names - {"self", "args", "kwargs"}


def check_arguments(callable_, options, what, entry):
    """Raises a `ValueError` naming the keys of `options` that `callable_` does not accept.

    Args:
        callable_: class or function.
        options: dict. Keyword arguments about to be passed.
        what: str. What is being built, e.g. `"loss 'margin'"`.
        entry: str. The configuration entry holding the options, e.g. `"loss"`.
    """
    names = accepted_arguments(callable_)
    if names is None:
        return
    unknown = sorted(set(options) - names)
    if unknown:
        hint = did_you_mean_keys(unknown, names)
        raise ValueError(
            f"Unknown argument(s) {unknown} for the {what} in the `{entry}` entry of the run "
            f"configuration.{hint} Accepted: {sorted(names)}."
        )


def build_loss(config, embedding_dim=None, num_memories=None):
    """Builds the resolved `config["loss"]` through `keras_dml.losses.get`.

    Args:
        config: dict. A run configuration resolved by `keras_dml.training.resolve_run`.
        embedding_dim: int or `None`. Embedding width, for a class or memory loss. Defaults to
            `None`.
        num_memories: int or `None`. The model's `loss_memory_keys`. Defaults to `None`.
    """
    options = config["loss"]
    if options is None:
        raise ValueError(
            "The run configuration has no `loss`: resolve it first with "
            "keras_dml.training.resolve_run(config, splits), which fills the method's default."
        )
    options = losses.with_class_arguments(dict(options), embedding_dim=embedding_dim)
    return losses.get(losses.with_memory_count(options, num_memories))


def check_loss_entry(entry):
    """Checks a `loss` entry (`{"name": ..., **arguments}`) against the named loss.

    Raises:
        ValueError: for a missing or unknown name, or an argument the loss does not take.
    """
    if not isinstance(entry, dict) or "name" not in entry:
        raise ValueError(
            'The `loss` entry needs a `name`, e.g. {"name": "margin", "margin": 0.2}. '
            f"Received: loss={entry!r}"
        )
    options = dict(entry)
    name = options.pop("name")
    check_arguments(registry.LOSSES.get(name), options, f"loss {name!r}", "loss")


def compile_with_config(config, model):
    """Compiles `model` with the configuration's optimizer and loss."""
    loss = build_loss(
        config,
        embedding_dim=getattr(model, "embedding_dim", None),
        num_memories=getattr(model, "loss_memory_keys", None),
    )
    model.compile(optimizer=build_optimizer(config), loss=loss)


def m_per_class_batches(config, model, splits):
    """Class-balanced batches of `splits["train"]` and their `SamplerEpochCallback`."""
    train_data = splits["train"]
    check_resolved(config)
    sampler = MPerClassSampler(
        train_data.labels,
        m=config["m_per_class"],
        batch_size=config["batch_size"],
        seed=config["seed"],
    )
    return sampled_batches(config, train_data, sampler), [SamplerEpochCallback(sampler)]


def build_augmentation(config):
    """`config["augmentation"]` for `ImageDataset.as_dataset`, a Keras pipeline deserialized."""
    augmentation = config.get("augmentation")
    if isinstance(augmentation, dict):
        return keras.saving.deserialize_keras_object(augmentation)
    return augmentation


def sampled_batches(config, train_data, sampler, with_clusters=False):
    """The augmented training batches of `train_data` in `sampler`'s order (fit unshuffled).

    Args:
        config: dict. A resolved run configuration.
        train_data: `ImageDataset`. The training split.
        sampler: a batch sampler of `keras_dml.data`.
        with_clusters: bool. Targets `{"labels", "clusters"}`. Defaults to `False`.
    """
    return train_data.as_dataset(
        training=True,
        batch_size=config["batch_size"],
        sampler=sampler,
        image_size=config["image_size"],
        seed=config["seed"],
        with_clusters=with_clusters,
        augmentation=build_augmentation(config),
    )


def compile_optimizer_only(config, model):
    """Compiles with `config["optimizer"]` only, for models that compute their own loss."""
    get_method(config["method"]).parse_options(config)
    model.compile(optimizer=build_optimizer(config))


def check_resolved(config):
    """Raises when `config` lacks the batch composition `resolve_run` fits."""
    if config["batch_size"] is None or config["m_per_class"] is None:
        raise ValueError(
            "The run configuration's batch_size / m_per_class are unset: resolve it first with "
            "keras_dml.training.resolve_run(config, splits), which fits them to the data."
        )
