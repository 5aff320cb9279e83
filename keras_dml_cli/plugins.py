"""`--plugin MODULE`: user modules imported before `keras-dml train` reads its methods."""

import importlib


def plugin_modules(argv):
    """The `--plugin MODULE` values in `argv`, in order (`--plugin=MODULE` works too).

    Examples:
    >>> plugin_modules(["train", "--plugin", "a", "--plugin=b.c", "--output", "x"])
    ['a', 'b.c']
    """
    modules = []
    for i, arg in enumerate(argv):
        if arg == "--plugin" and i + 1 < len(argv):
            modules.append(argv[i + 1])
        elif arg.startswith("--plugin="):
            modules.append(arg.split("=", 1)[1])
    return modules


def load_plugins(modules):
    """Imports user modules that register methods (`ValueError` naming a module not found)."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            raise ValueError(
                f"Cannot import the plugin module {module!r} ({error}). Put its folder on "
                "PYTHONPATH or install it. Received: --plugin " + module
            ) from error
