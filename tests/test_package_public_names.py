"""A package's public names stay what `__init__` exports after every submodule is imported.

Importing a submodule sets it as an attribute of its package: a module `keras_dml/evaluation/
embed.py` next to the re-exported function `keras_dml.evaluation.embed` replaced the function by
the module once anything imported it, and `keras_dml.evaluation.embed(model, data)` failed.
"""

import importlib
import pkgutil
import types

import keras_dml

MODULES = [  # `__main__` modules run a command when imported
    (name, is_package)
    for _, name, is_package in pkgutil.walk_packages(keras_dml.__path__, "keras_dml.")
    if not name.endswith(".__main__")
]
PACKAGES = [name for name, is_package in MODULES if is_package]


def test_no_submodule_shadows_a_public_name():
    exported = {}
    for name in PACKAGES:
        package = importlib.import_module(name)
        for public in getattr(package, "__all__", ()):
            value = getattr(package, public)
            if not isinstance(value, types.ModuleType):
                exported[f"{name}.{public}"] = value
    for name, _ in MODULES:
        importlib.import_module(name)
    shadowed = [
        path
        for path, value in exported.items()
        if getattr(importlib.import_module(path.rsplit(".", 1)[0]), path.rsplit(".", 1)[1])
        is not value
    ]
    assert not shadowed, f"submodules replace these public names: {shadowed}"


def test_evaluation_embed_is_the_function():
    import keras_dml.evaluation

    assert callable(keras_dml.evaluation.embed)
    assert keras_dml.evaluation.embed.__module__ == "keras_dml.serving.embed"
