"""The CLI's lazy entry points: which module runs each `keras-dml` sub-command.

Running a sub-command needs Keras and TensorFlow (several seconds to import); `keras-dml --help`,
each sub-command's help and a refused argument need neither. So the parser layer
(`keras_dml.cli.arguments`) imports nothing heavy, and the modules that run the sub-commands,
which import what they need at their top, are named here as data (`"module:function"`, as in
console_scripts and the `keras_dml.methods` plug-in entry points) and imported on dispatch only.
"""

import importlib

# sub-command -> (check, run). `check(args)` refuses bad arguments before Keras loads (`None`:
# nothing to check early); `run(args)` runs the sub-command and returns the exit code.
COMMANDS = {
    "train": ("keras_dml.cli.arguments.train:check_names", "keras_dml.cli.train:run_train"),
    "evaluate": ("keras_dml.cli.rerank:rerank_from_args", "keras_dml.cli.evaluate:run_evaluate"),
    "demo": ("keras_dml.cli.arguments.demo:check_demo_args", "keras_dml.cli.demo:run_demo"),
    "report": (None, "keras_dml.cli.report:run_report"),
    "export": (
        "keras_dml.cli.arguments.export:check_export_args",
        "keras_dml.cli.export:run_export",
    ),
    "zoo": (None, "keras_dml.cli.zoo:run_zoo"),
    "search": ("keras_dml.cli.rerank:rerank_from_args", "keras_dml.cli.search:run_search"),
    "backbones": (None, "keras_dml.cli.backbones:run_backbones"),
}

# `keras_dml.methods.list_methods`, loaded only when `--plugin` modules or installed packages
# register methods that `keras-dml train --help` must list (the registry imports Keras).
METHOD_REGISTRY = "keras_dml.methods:list_methods"


def load_entry_point(entry_point):
    """Imports `"module:function"` and returns the function.

    Args:
        entry_point: str, e.g. `"keras_dml.cli.train:run_train"`.

    Returns:
        The callable named after the colon.

    Examples:
    >>> load_entry_point("keras_dml.cli.errors:error_message")(ValueError("bad"))
    'keras-dml: error: bad'
    """
    module, name = entry_point.split(":")
    return getattr(importlib.import_module(module), name)


def run_command(args):
    """Runs the parsed sub-command `args.command`: its early check, then its run.

    Args:
        args: `argparse.Namespace` of `keras_dml.cli.parser.build_parser`.

    Returns:
        int, the sub-command's exit code.
    """
    check, run = COMMANDS[args.command]
    if check is not None:
        load_entry_point(check)(args)
    return load_entry_point(run)(args)
