"""Which module runs each `keras-dml` sub-command, imported only when it runs."""

from keras_dml_cli.arguments.embed import check_embed_args
from keras_dml_cli.arguments.export import check_export_args
from keras_dml_cli.arguments.rerank import check_rerank_name
from keras_dml_cli.arguments.train import check_names


def run_command(args):
    """Runs the parsed sub-command `args.command`, its early check first; returns its exit code."""
    check = EARLY_CHECKS.get(args.command)
    if check is not None:
        check(args)
    return RUNS[args.command](args)


# The imports below load keras_dml (hence Keras) and run only for the sub-command given.


def _train(args):
    from keras_dml_cli.run.train import run_train  # heavy dependency: keras

    return run_train(args)


def _evaluate(args):
    from keras_dml_cli.run.evaluate import run_evaluate  # heavy dependency: keras

    return run_evaluate(args)


def _demo(args):
    from keras_dml_cli.run.demo import run_demo  # heavy dependency: keras

    return run_demo(args)


def _report(args):
    from keras_dml_cli.run.report import run_report  # heavy dependency: keras

    return run_report(args)


def _export(args):
    from keras_dml_cli.run.export import run_export  # heavy dependency: keras

    return run_export(args)


def _zoo(args):
    from keras_dml_cli.run.zoo import run_zoo  # heavy dependency: keras

    return run_zoo(args)


def _search(args):
    from keras_dml_cli.run.search import run_search  # heavy dependency: keras

    return run_search(args)


def _embed(args):
    from keras_dml_cli.run.embed import run_embed  # heavy dependency: keras

    return run_embed(args)


def _backbones(args):
    from keras_dml_cli.run.backbones import run_backbones  # heavy dependency: keras

    return run_backbones(args)


EARLY_CHECKS = {
    "train": check_names,
    "evaluate": check_rerank_name,
    "search": check_rerank_name,
    "export": check_export_args,
    "embed": check_embed_args,
}
RUNS = {
    "train": _train,
    "evaluate": _evaluate,
    "demo": _demo,
    "report": _report,
    "export": _export,
    "zoo": _zoo,
    "search": _search,
    "embed": _embed,
    "backbones": _backbones,
}
