"""A misspelt `model` argument of a run configuration, explained in one line with the fix."""

import re

import keras

from keras_dml.methods.defaults import accepted_arguments
from keras_dml.utils.suggestions import did_you_mean_keys

_UNRECOGNIZED = re.compile(r"Unrecognized keyword arguments passed to (\w+): \{(.*)\}")


def model_class(name):
    """The `keras.Model` subclass called `name` (built-in or a plug-in's), or `None`."""
    pending = [keras.Model]
    while pending:
        cls = pending.pop()
        if cls.__name__ == name:
            return cls
        pending.extend(cls.__subclasses__())
    return None


def model_argument_error(error, config):
    """The one-line `ValueError` for Keras' unknown-keyword error of `MethodSpec.build`.

    Args:
        error: Exception. What `MethodSpec.build` raised.
        config: dict. The run configuration being built.

    Returns:
        `ValueError`, or `None` when `error` is not about unknown keyword arguments.
    """
    match = _UNRECOGNIZED.search(str(error))
    if match is None:
        return None
    class_name, received = match.groups()
    unknown = sorted(re.findall(r"'(\w+)':", received))
    cls = model_class(class_name)
    accepted = accepted_arguments(cls) if cls is not None else None
    accepted = sorted((accepted or set()) - {"backbone"})
    hint = did_you_mean_keys(unknown, accepted)
    known = f" Accepted: {accepted}." if accepted else ""
    return ValueError(
        f"Unknown argument(s) {unknown} for the {class_name} of method {config['method']!r} in "
        f"the `model` entry of the run configuration.{hint}{known} Received: "
        f"model={config['model']}"
    )
