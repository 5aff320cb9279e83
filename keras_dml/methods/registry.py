"""The registry of training methods: one `MethodSpec` per method, from `@register_method`."""

import dataclasses

from keras_dml.utils.registry import Registry
from keras_dml.utils.suggestions import did_you_mean_keys

ENTRY_POINT_GROUP = "keras_dml.methods"


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """`method_options` of a method that takes none."""


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """How `keras-dml train --method NAME` builds and trains a model family.

    Args:
        name: str. The CLI name.
        description: str. One line for `keras-dml train --help`.
        build: callable `(config, backbone, splits) -> keras.Model`.
        prepare: callable `(config, model, splits) -> (train_data, callbacks)`, or `None`.
        compile: callable `(config, model)`, or `None` for the configured optimizer and loss.
        options: type. A frozen dataclass: the method's `method_options`. Defaults to `NoOptions`.
        uses_state_dir: bool. It saves state in `method_options.state_dir`. Defaults to `False`.
        model: type or `None`. The architecture `build` makes: its constructor arguments are the
            `model` entry's keys, and its learner-count default is the one `train` fits.
        tiny: dict. The `model` arguments of a small model the tests build (`tiny_model`).
        training_only_weights: callable `(model) -> list`, or `None`. Weights export leaves out.
        default_loss: dict or `None`. The `loss` when none is set. Defaults to the margin loss.
        learners_option: str. The `model` argument of `--num-learners`. Defaults to `num_learners`.
        classes_per_learner: int. Classes each learner needs; `0`: no cap. Defaults to `0`.
        title: str or `None`. The long name on zoo cards. Defaults to `None`.
        demo: dict or `None`. The method's entries in `keras-dml demo`. Defaults to `None`.
    """

    name: str
    description: str
    build: object
    prepare: object = None
    compile: object = None
    options: type = NoOptions
    uses_state_dir: bool = False
    model: type = None
    tiny: dict = None
    training_only_weights: object = None
    default_loss: dict = dataclasses.field(default_factory=lambda: {"name": "margin"})
    learners_option: str = "num_learners"
    classes_per_learner: int = 0
    title: str = None
    demo: dict = None

    def tiny_model(self, backbone):
        """The method's small test model on `backbone` (its `tiny` arguments)."""
        return self.model(backbone, **self.tiny)

    def parse_options(self, config):
        """The method's options from `config["method_options"]`; unknown keys raise `ValueError`."""
        values = dict((config or {}).get("method_options") or {})
        known = sorted(field.name for field in dataclasses.fields(self.options))
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(
                f"Unknown method_options {unknown} for method {self.name!r}."
                f"{did_you_mean_keys(unknown, known)} Known: {known or 'none'} (model arguments "
                "go under `model`, the loss under `loss`). "
                f"Received: method_options={values}"
            )
        return self.options(**values)


METHODS = Registry(
    "method",
    entry_point_group=ENTRY_POINT_GROUP,
    hint=" Register your own with @keras_dml.methods.register_method.",
)


def register_method(name_or_spec=None, /, *, description="", overwrite=False, **fields):
    """Registers a training method; used as a decorator on its build function.

    Args:
        name_or_spec: str or `MethodSpec`. The name (decorator form) or a complete spec.
        description: str. One line for `keras-dml train --help` (decorator form).
        overwrite: bool. Replace a method of the same name. Defaults to `False`.
        **fields: the other `MethodSpec` fields (decorator form).

    Returns:
        The decorator, or the spec in the call form.

    Raises:
        ValueError: the name is taken (and `overwrite` is false) or the spec is incomplete.

    Examples:
    >>> @register_method("my_method", description="one linear embedding")  # doctest: +SKIP
    ... def build(config, backbone, splits):
    ...     return keras_dml.models.EmbeddingModel(backbone, **config["model"])
    """
    if isinstance(name_or_spec, MethodSpec):
        if fields or description:
            raise ValueError(
                "Pass either a MethodSpec or a name with fields, not both. "
                f"Received: spec={name_or_spec.name!r}, fields={sorted(fields)}"
            )
        _add(name_or_spec, overwrite)
        return name_or_spec
    if not isinstance(name_or_spec, str) or not name_or_spec:
        raise ValueError(
            "register_method needs the method's name, e.g. "
            f'@register_method("my_method", description=...). Received: {name_or_spec!r}'
        )

    def decorator(build):
        _add(
            MethodSpec(name=name_or_spec, description=description, build=build, **fields), overwrite
        )
        return build

    return decorator


def _add(spec, overwrite):
    if not spec.description:
        raise ValueError(f"Method {spec.name!r} needs a one-line `description` for --help.")
    if spec.tiny is not None and not (isinstance(spec.tiny, dict) and spec.model is not None):
        raise ValueError(
            f"`tiny` of method {spec.name!r} is the `model` arguments of a small test model (a "
            f"dict), and needs `model=` (the architecture class). Received: tiny={spec.tiny!r}, "
            f"model={spec.model!r}"
        )
    if not (dataclasses.is_dataclass(spec.options) and isinstance(spec.options, type)):
        raise ValueError(
            f"`options` of method {spec.name!r} must be a dataclass type. "
            f"Received: options={spec.options!r}"
        )
    if spec.classes_per_learner and spec.model is None:
        raise ValueError(
            f"Method {spec.name!r} fits its learner count to the classes (classes_per_learner): "
            "give its architecture as `model=` so that the count's default is read from it."
        )
    if spec.uses_state_dir and "state_dir" not in {
        f.name for f in dataclasses.fields(spec.options)
    }:
        raise ValueError(f"Method {spec.name!r} uses a state_dir; its options need a `state_dir`.")
    METHODS.register(spec.name, spec, description=spec.description, overwrite=overwrite)


def unregister_method(name):
    """Removes a method from the registry (e.g. a test's toy method)."""
    METHODS.unregister(name)


def list_methods(verbose=False):
    """Names of every registered training method, sorted (`{name: description}` if verbose)."""
    return METHODS.describe() if verbose else METHODS.names()


def get_method(name):
    """The `MethodSpec` called `name`; a `ValueError` with the closest name if there is none."""
    return METHODS.get(name)
