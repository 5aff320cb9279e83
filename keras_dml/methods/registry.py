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
import importlib.metadata

from keras_dml.utils.suggestions import did_you_mean, did_you_mean_keys

ENTRY_POINT_GROUP = "keras_dml.methods"


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """`method_options` of a method that takes none."""


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """How `keras-dml train --method NAME` builds and trains a model family.

    What building, training and exporting the method need, plus its `tiny` model, which the
    tests that iterate the registry build (so a new method is covered without an edit); the
    demo's entries live in `keras_dml.demo.entries`, the zoo cards' long names in
    `keras_dml.zoo.method_titles`.

    Args:
        name: str. The CLI name.
        description: str. One line for `keras-dml train --help` and the README table.
        build: callable `(config, backbone, splits) -> keras.Model`. `splits` is the dict of
            loaded `ImageDataset`s (`train`, `val`, ...): nothing is reloaded by name.
        prepare: callable `(config, model, splits) -> (tf.data.Dataset, callbacks)`.
            Defaults to `None`: class-balanced m-per-class batches and no extra callback.
        compile: callable `(config, model) -> None`. Defaults to `None`: the configuration's
            optimizer and loss (`keras_dml.methods.defaults.compile_with_config`).
        options: a frozen dataclass type. The method's `method_options`, with their defaults;
            `parse_options` rejects unknown keys. Defaults to `NoOptions`.
        uses_state_dir: bool. The method keeps training state on disk (e.g. D&C's cluster
            assignments); `train` then sets `method_options["state_dir"]` inside the run folder
            so that resuming an interrupted run restores it. Its options need a `state_dir`.
        tiny: callable `(backbone) -> keras.Model` or `None`. A small model of the family for
            tests (the export parity test builds every registered method with it).
        training_only_weights: callable `(model) -> list of variables` or `None`. The weights
            `call` never reads (training-only parts and state), which export leaves out.
        default_loss: dict or `None`. The run configuration's `loss` when it gives none
            (`keras_dml.training.train` fills it in and saves it in `config.json`). Defaults to
            `None`: the method's own default (e.g. D&C's margin loss).
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
    options: type = NoOptions
    uses_state_dir: bool = False
    tiny: object = None
    training_only_weights: object = None
    default_loss: dict = None
    learners_option: str = "num_learners"
    classes_per_learner: int = 0

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


_METHODS = {}
_ENTRY_POINTS_LOADED = False


def register_method(name_or_spec=None, /, *, description="", overwrite=False, **fields):
    """Registers a training method; used as a decorator on its build function.

    Args:
        name_or_spec: str or `MethodSpec`. The method's name (decorator form) or a complete
            spec (call form).
        overwrite: bool. Replace a method of the same name. Defaults to `False`.
        description: str. One line for `keras-dml train --help` (required, decorator form).
        **fields: the other `MethodSpec` fields (`prepare`, `compile`, `options`, `tiny`,
            ...), decorator form only.

    Returns:
        In the decorator form, a decorator that registers `MethodSpec(name, build=function,
        **fields)` and returns the function unchanged; in the call form, the spec.

    Raises:
        ValueError: when the name is taken (and `overwrite` is false) or the spec is incomplete.

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
        spec = MethodSpec(name=name_or_spec, description=description, build=build, **fields)
        _add(spec, overwrite)
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
    if spec.name in _METHODS and not overwrite and _METHODS[spec.name] != spec:
        raise ValueError(
            f"A method named {spec.name!r} is registered already; pass overwrite=True to "
            "replace it."
        )
    _METHODS[spec.name] = spec


def unregister_method(name):
    """Removes a method from the registry (e.g. a test's toy method). Unknown names are an error."""
    get_method(name)
    del _METHODS[name]


def load_entry_points():
    """Imports the modules of the `keras_dml.methods` entry-point group (installed plug-ins).

    Each entry point names a module (or an object in it) whose import registers methods with
    `@register_method`. Called once by `list_methods` and `get_method`.
    """
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        entry_point.load()


def list_methods(verbose=False):
    """Names of every registered training method, sorted.

    Args:
        verbose: bool. Return `{name: description}` instead. Defaults to `False`.

    Examples:
    >>> "dc" in list_methods()
    True
    """
    load_entry_points()
    if verbose:
        return {name: _METHODS[name].description for name in sorted(_METHODS)}
    return sorted(_METHODS)


def get_method(name):
    """Returns the `MethodSpec` called `name`, with a suggestion for a misspelt name.

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    load_entry_points()
    if name not in _METHODS:
        raise ValueError(
            f"Unknown method {name!r}.{did_you_mean(name, _METHODS)} Known methods: "
            f"{sorted(_METHODS)}. Register your own with @keras_dml.methods.register_method."
        )
    return _METHODS[name]
