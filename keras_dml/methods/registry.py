"""The registry of training methods: how to build, compile and feed each model family.

A method is a `MethodSpec` registered with `@register_method`. Each method folder's `method.py`
registers its spec when `keras_dml.models` is imported (as importing `keras_dml.backbones` fills
the backbone registry); user code registers its own the same way, or through a
`keras_dml.methods` entry point that `list_methods` / `get_method` load on first use.
`keras_dml.training.train` calls the hooks in order:
`build(config, backbone, splits) -> model`, `compile(config, model)` and
`prepare(config, model, splits) -> (train_dataset, callbacks)`.

This module imports nothing from `keras_dml` but `keras_dml.utils`: methods import it, never the
other way round.
"""

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
        description: str. One line for `keras-dml train --help` and the README table.
        build: callable `(config, backbone, splits) -> keras.Model`. `splits` is the dict of
            loaded `ImageDataset`s (`train`, `val`, ...).
        prepare: callable `(config, model, splits) -> (train_data, callbacks)`, or `None` for
            class-balanced m-per-class batches and no extra callback.
        compile: callable `(config, model) -> None`, or `None` for the configuration's
            optimizer and loss (`keras_dml.methods.defaults.compile_with_config`).
        options: a frozen dataclass type: the method's `method_options` and their defaults.
        uses_state_dir: bool. The method keeps training state on disk; `train` sets
            `method_options["state_dir"]` inside the run folder so a resumed run restores it.
        tiny: callable `(backbone) -> keras.Model`. A small model of the family; the tests that
            iterate the registry build it, so a new method is covered without an edit.
        training_only_weights: callable `(model) -> list of variables`, or `None`. Weights
            `call` never reads, which export leaves out.
        default_loss: dict or `None`. The `loss` entry when the configuration gives none.
        learners_option: str. The `model` argument that `--num-learners` sets.
        classes_per_learner: int. Training classes each learner needs (D&C: 2); `train` caps
            an unset learner count to the data. `0`: the count does not depend on the classes.
        title: str or `None`. The long name on zoo cards (paper and year).
        demo: dict or `None`. The method's run-configuration entries in `keras-dml demo`;
            `None` leaves it out of the demo.
    """

    name: str
    description: str
    build: object
    prepare: object = None
    compile: object = None
    options: type = NoOptions
    uses_state_dir: bool = False
    tiny: object = None
    training_only_weights: object = None
    default_loss: dict = None
    learners_option: str = "num_learners"
    classes_per_learner: int = 0
    title: str = None
    demo: dict = None

    def parse_options(self, config):
        """The method's options from `config["method_options"]`, defaults filled in.

        Args:
            config: dict. A run configuration (only `method_options` is read).

        Returns:
            An instance of `self.options`.

        Raises:
            ValueError: for a key the method does not know, naming the known keys.
        """
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
        name_or_spec: str or `MethodSpec`. The method's name (decorator form) or a complete
            spec (call form).
        description: str. One line for `keras-dml train --help` (required, decorator form).
        overwrite: bool. Replace a method of the same name. Defaults to `False`.
        **fields: the other `MethodSpec` fields, decorator form only.

    Returns:
        The decorator (which registers `MethodSpec(name, build=function, **fields)` and returns
        the function unchanged), or the spec in the call form.

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
    if not (dataclasses.is_dataclass(spec.options) and isinstance(spec.options, type)):
        raise ValueError(
            f"`options` of method {spec.name!r} must be a dataclass type. "
            f"Received: options={spec.options!r}"
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
    """Names of every registered training method, sorted (`{name: description}` if verbose).

    Examples:
    >>> "dc" in list_methods()
    True
    """
    return METHODS.describe() if verbose else METHODS.names()


def get_method(name):
    """The `MethodSpec` called `name`; a `ValueError` with the closest name if there is none."""
    return METHODS.get(name)
