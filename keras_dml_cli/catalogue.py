"""The registries' names for `--help` and the early checks, from `catalogue.json`, without Keras.

`python -m keras_dml_cli.catalogue` writes the file; a test fails when it is out of date.
"""

import functools
import importlib.metadata
import json
import os
import sys

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalogue.json")
METHOD_ENTRY_POINT_GROUP = "keras_dml.methods"


@functools.cache
def catalogue():
    """The generated catalogue: `{"methods": {name: description}, "losses": [...], ...}`."""
    with open(PATH, encoding="utf-8") as file:
        return json.load(file)


def build():
    """The catalogue of the registries as keras_dml declares them (imports Keras)."""
    import keras_dml  # noqa: F401 (heavy dependency: keras; registers every built-in)
    from keras_dml.backbones.conversions import CONVERSIONS
    from keras_dml.demo import demo_methods
    from keras_dml.methods.registry import METHODS

    conversions = {}
    for conversion in CONVERSIONS:
        conversions.setdefault(conversion.backbone, []).append(conversion.source)
    builtin = {
        name: spec.description
        for name, spec in METHODS.items()
        if spec.build.__module__.startswith("keras_dml.")
    }
    return {
        "methods": builtin,
        "demo_methods": [name for name in demo_methods() if name in builtin],
        "losses": keras_dml.losses.list_losses(),
        "datasets": keras_dml.data.list_datasets(),
        "backbones": keras_dml.backbones.list_backbones(),
        "rerank": keras_dml.search.rerank.RERANKERS.names(),
        "backbone_conversions": conversions,
    }


def has_installed_plugins():
    """Whether an installed package registers methods (`keras_dml.methods` entry points)."""
    return bool(importlib.metadata.entry_points(group=METHOD_ENTRY_POINT_GROUP))


def method_descriptions(plugins=()):
    """`{name: description}` of the trainable methods, for `keras-dml train --help`.

    The catalogue's, or the registry's (importing Keras) with `plugins` (`--plugin` modules) or
    methods of installed packages.
    """
    plugins = list(plugins)
    if not plugins and not has_installed_plugins():
        return dict(catalogue()["methods"])
    from keras_dml_cli.plugins import load_plugins

    load_plugins(plugins)
    from keras_dml.methods import list_methods  # heavy dependency: keras

    return list_methods(verbose=True)


def main():
    """Writes `catalogue.json` from the registries."""
    with open(PATH, "w", encoding="utf-8") as file:
        json.dump(build(), file, indent=1, sort_keys=True)
        file.write("\n")
    print(f"wrote {PATH}", file=sys.stderr)


if __name__ == "__main__":
    main()
