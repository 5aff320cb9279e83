"""`ArgumentConfig`: one `get_config` for every loss, loss layer and miner, from its arguments."""

import inspect

import keras

# Values stored as they are; anything else goes through `keras.saving.serialize_keras_object`.
_PLAIN = (str, int, float, bool, type(None))


class ArgumentConfig:
    """Gives a class the config of its constructor's arguments, nested objects serialised.

    Put it first among the bases: `class MyLoss(ArgumentConfig, keras.losses.Loss)`.

    Examples:
    >>> class ScaledLoss(ArgumentConfig, keras.losses.Loss):
    ...     def __init__(self, scale=1.0, name="scaled"):
    ...         super().__init__(name=name)
    ...         self.scale = scale
    >>> ScaledLoss(2.0).get_config()["scale"]
    2.0
    """

    def __new__(cls, *args, **kwargs):
        parent_new = super().__new__
        if parent_new is object.__new__:
            instance = parent_new(cls)
        else:
            instance = parent_new(cls, *args, **kwargs)
        vars(instance)["_constructor_arguments"] = _bound_arguments(cls, args, kwargs)
        return instance

    @property
    def constructor_arguments(self):
        """The arguments `__init__` received, with its defaults (a copy)."""
        return dict(vars(self).get("_constructor_arguments") or {})

    def get_config(self):
        parent = getattr(super(), "get_config", None)
        config = parent() if parent is not None else {}
        for name, value in self.constructor_arguments.items():
            if name not in config:
                config[name] = serialize_argument(self._resolved(name, value))
        return config

    def _resolved(self, name, value):
        """`value`, or for `None` the plain value the constructor resolved under `name`."""
        if value is None:
            kept = vars(self).get(name)
            if isinstance(kept, _PLAIN):
                return kept
        return value

    @classmethod
    def from_config(cls, config):
        config = {name: deserialize_argument(value) for name, value in config.items()}
        parent = getattr(super(), "from_config", None)
        return parent(config) if parent is not None else cls(**config)


def _bound_arguments(cls, args, kwargs):
    """`{name: value}` of `cls(*args, **kwargs)`, inherited defaults included; `None` if unbound."""
    signature = inspect.signature(cls.__init__)
    try:
        bound = signature.bind(None, *args, **kwargs)
    except TypeError:
        return None  # `__init__` raises its own error
    bound.apply_defaults()
    arguments = {}
    for index, (name, value) in enumerate(bound.arguments.items()):
        kind = signature.parameters[name].kind
        if index == 0 or kind == inspect.Parameter.VAR_POSITIONAL:
            continue  # `self`; positional varargs cannot be passed back by name
        if kind == inspect.Parameter.VAR_KEYWORD:
            arguments.update(value)
        else:
            arguments[name] = value
    for base in cls.__mro__[1:]:
        if not _passes_kwargs(signature) or not issubclass(base, ArgumentConfig):
            break
        if "__init__" in vars(base) and base is not ArgumentConfig:
            signature = inspect.signature(base.__init__)
            for parameter in list(signature.parameters.values())[1:]:
                if parameter.default is not inspect.Parameter.empty:
                    arguments.setdefault(parameter.name, parameter.default)
    return arguments


def _passes_kwargs(signature):
    return any(p.kind == inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())


def serialize_argument(value):
    """A constructor argument in config form: plain values as they are, objects serialised."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, dict) and not _is_serialized(value):
        return {key: serialize_argument(item) for key, item in value.items()}
    return keras.saving.serialize_keras_object(value)


def deserialize_argument(value):
    """The inverse of `serialize_argument`: serialised Keras objects rebuilt, the rest kept."""
    if _is_serialized(value):
        return keras.saving.deserialize_keras_object(value)
    return value


def _is_serialized(value):
    return isinstance(value, dict) and "class_name" in value and "config" in value
