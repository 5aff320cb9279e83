"""A `MethodSpec`'s default hooks and the builders a method's own hooks call.

The default `compile` (`compile_with_config`: the configuration's optimizer and loss) and
`prepare` (`m_per_class_batches`: class-balanced batches) of a registered method, and the pieces
methods share (`build_optimizer`, `build_loss`, `sampled_batches`, `compile_optimizer_only`). They
read the dict form of a run configuration (`keras_dml.training.RunConfig.to_dict()`). Part of the
method registry: method folders import it, so it imports nothing of `keras_dml.training`.
"""

import inspect

import keras

from keras_dml import losses
from keras_dml.data import MPerClassSampler, SamplerEpochCallback
from keras_dml.losses import registry
from keras_dml.methods.batch_composition import with_batch_composition
from keras_dml.methods.registry import get_method
from keras_dml.optimizers import with_multipliers
from keras_dml.utils.suggestions import did_you_mean, did_you_mean_keys


def build_optimizer(config):
    """Builds the Keras optimizer named in `config["optimizer"]` (`name` + keyword arguments).

    An `lr_multipliers` entry (`{pattern: factor}` over variable paths) wraps it in
    `keras_dml.optimizers.LearningRateMultipliers`, e.g. `{"proxies$": 100.0}` for ProxyAnchor's
    proxies (filled in by `keras_dml.training.train` for that loss).

    Raises:
        ValueError: for an unknown optimizer name or an argument the optimizer does not take;
            the message names the accepted arguments.
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
    """The Keras optimizer class that `keras.optimizers.get(name)` builds.

    Args:
        name: str. A `keras.optimizers` name, e.g. `"adam"`.
        entry: dict. The `optimizer` entry of the run configuration, for the message.

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
    """`{lower-case name: class}` of the optimizers `keras.optimizers` exports (the names
    `keras.optimizers.get` takes)."""
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
    """The keyword arguments `callable_` accepts, or `None` when a function takes any (`**kw`).

    A class forwarding `**kwargs` to its base accepts its bases' named arguments too.

    Args:
        callable_: a class or function.

    Returns:
        set of str, or `None`.
    """
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
        callable_: a class or function.
        options: dict of keyword arguments about to be passed.
        what: str. What is being built, for the message (e.g. `"loss 'margin'"`).
        entry: str. The configuration entry holding the options (e.g. `"loss"`).
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


DEFAULT_LOSS = {"name": "margin"}


def build_loss(config, default=None, embedding_dim=None, num_memories=None):
    """Builds the loss named in `config["loss"]` (or `default`) through `keras_dml.losses.get`.

    Args:
        config: resolved run configuration.
        default: dict. The method's loss when `config["loss"]` is `None`. Defaults to the
            margin loss with distance-weighted sampling (Wu et al. 2017).
        embedding_dim: int or `None`. Size of the embeddings a class-based loss (proxies,
            class weights) receives, filled in when the config does not give it.
        num_memories: int or `None`. The model's `loss_memory_keys`, filled in for a
            cross-batch memory loss when the config does not give it.
    """
    options = losses.with_class_arguments(
        dict(config["loss"] or default or DEFAULT_LOSS), embedding_dim=embedding_dim
    )
    options = losses.with_memory_count(options, num_memories)
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
    """Class-balanced training batches: `batch_size / m_per_class` classes x `m_per_class`.

    Returns:
        `(batches, [SamplerEpochCallback])` over `splits["train"]` (a `tf.data.Dataset` on
        TensorFlow, a `keras.utils.PyDataset` on JAX and PyTorch): the callback sets
        the sampler's epoch, so a resumed run draws the batches the uninterrupted run drew.
    """
    train_data = splits["train"]
    config = with_batch_composition(config, train_data.labels)
    sampler = MPerClassSampler(
        train_data.labels,
        m=config["m_per_class"],
        batch_size=config["batch_size"],
        seed=config["seed"],
    )
    return sampled_batches(config, train_data, sampler), [SamplerEpochCallback(sampler)]


def build_augmentation(config):
    """The training augmentation of `config["augmentation"]` for `ImageDataset.as_dataset`.

    Returns:
        `None` (the dataset's default), a name, or the Keras pipeline deserialized from its
        config dict.
    """
    augmentation = config.get("augmentation")
    if isinstance(augmentation, dict):
        return keras.saving.deserialize_keras_object(augmentation)
    return augmentation


def sampled_batches(config, train_data, sampler, with_clusters=False):
    """The augmented training batches of `train_data` in `sampler`'s batch order.

    `train_data.as_dataset`: a `tf.data.Dataset` on TensorFlow, a `keras.utils.PyDataset` on
    JAX and PyTorch (fit it with `shuffle=False`, as `train` does, to keep the sampler's order).

    Args:
        config: resolved run configuration (`batch_size`, `image_size`, `seed`,
            `augmentation`).
        train_data: training `ImageDataset`.
        sampler: a batch sampler of `keras_dml.data`.
        with_clusters: bool. Targets `{"labels", "clusters"}` (cluster samplers). Defaults to
            `False`.
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
    """Compiles with `config["optimizer"]` only, for models that compute their loss themselves.

    The method's `method_options` are checked first (ABE, M-heads and DCML take none).
    """
    get_method(config["method"]).parse_options(config)
    model.compile(optimizer=build_optimizer(config))
