"""`resolve_run`: the one step that fills every default and fitted value of a run."""

import dataclasses
import inspect
import warnings

from keras_dml import backbones
from keras_dml.losses.class_weights import with_class_arguments, with_recommended_lr_multipliers
from keras_dml.losses.cross_batch_memory.footprint import check_memory_entry
from keras_dml.methods import get_method
from keras_dml.methods.batch_composition import fit_batch_composition, usable_classes
from keras_dml.methods.defaults import accepted_arguments, check_loss_entry
from keras_dml.training.run_config import RunConfig
from keras_dml.utils.suggestions import did_you_mean_keys


def resolve_run(config, splits):
    """The run configuration that trains: every default and every value fitted to the data.

    Args:
        config: `RunConfig` or a dict `RunConfig.from_dict` takes.
        splits: dict of loaded splits (`load_splits`); only `train` is read.

    Returns:
        `RunConfig`, every default and fitted value filled in.

    Raises:
        ValueError: for an unknown option or loss argument, or settings the data cannot serve.

    Examples:
    >>> splits = keras_dml.training.load_splits({"method": "dc", "dataset": "digits"})
    >>> resolve_run({"method": "dc", "dataset": "digits"}, splits).model["num_learners"]
    2
    """
    if not isinstance(config, RunConfig):
        config = RunConfig.from_dict(config)
    values = config.to_dict()
    method = get_method(values["method"])
    options = method.parse_options(values)
    warn_unreached_stages(options, values["epochs"])
    backbones.check_backbone_weights(values["backbone"])
    train_labels = splits["train"].labels
    num_classes = usable_classes(train_labels)
    values["batch_size"], values["m_per_class"] = fit_batch_composition(
        values["batch_size"], values["m_per_class"], num_classes
    )
    check_model_arguments(values["model"], method)
    values["model"] = fitted_learner_count(values["model"], method, num_classes)
    loss = values["loss"] or method.default_loss
    if loss is not None:
        check_loss_entry(loss)
        loss = with_class_arguments(loss, num_classes=splits["train"].num_classes)
        if loss["name"] == "cross_batch_memory" and "memory_size" in loss:
            check_memory_entry(loss, values["batch_size"])
    values["loss"] = loss
    values["optimizer"] = with_recommended_lr_multipliers(values["optimizer"], loss)
    values["method_options"] = dataclasses.asdict(options)
    return RunConfig.from_dict(values)


def fitted_learner_count(model, method, num_classes):
    """A copy of `model` with the method's learner count capped to `num_classes` when unset.

    Raises:
        ValueError: the user's own count needs more classes than the split has.
    """
    model = dict(model)
    if not method.classes_per_learner:
        return model
    option = method.learners_option
    most = max(1, num_classes // method.classes_per_learner)
    requested = model.get(option)
    if requested is None:
        model[option] = min(default_argument(method.model, option), most)
    elif requested > most:
        raise ValueError(
            f"Method {method.name!r} with {option}={requested} needs "
            f"{method.classes_per_learner} training classes per learner "
            f"({method.classes_per_learner * requested}), but the training split has "
            f"{num_classes} with 2 or more images. Use --num-learners {most} (config: "
            f'"model": {{"{option}": {most}}}). Received: {option}={requested}'
        )
    return model


def default_argument(model_class, name):
    """The default of `model_class`'s constructor argument `name`."""
    return inspect.signature(model_class).parameters[name].default


def check_model_arguments(model, method):
    """Raises, in one line, for a `model` key the method's architecture does not take."""
    if method.model is None:
        return
    accepted = accepted_arguments(method.model)
    unknown = sorted(set(model) - (accepted or set(model)))
    if unknown:
        accepted = sorted(accepted - {"backbone"})
        raise ValueError(
            f"Unknown argument(s) {unknown} for the {method.model.__name__} of method "
            f"{method.name!r} in the `model` entry of the run configuration."
            f"{did_you_mean_keys(unknown, accepted)} Accepted: {accepted}. Received: model={model}"
        )


def warn_unreached_stages(options, epochs):
    """Warns for each `*_epoch` stage option that a run of `epochs` epochs never reaches."""
    for field in dataclasses.fields(options):
        value = getattr(options, field.name)
        if field.name.endswith("_epoch") and isinstance(value, int) and value >= epochs:
            warnings.warn(
                f"method_options.{field.name}={value} is not below epochs={epochs}, so that "
                f"stage will not run (epochs count from 0); set it to at most {epochs - 1}, or "
                "to null to train without it.",
                stacklevel=3,
            )
