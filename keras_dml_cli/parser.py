"""The argument parser of `keras-dml`: one sub-command per module, built without TensorFlow."""

import argparse
import sys

from keras_dml_cli.arguments.backbones import add_backbones_parser
from keras_dml_cli.arguments.demo import add_demo_parser
from keras_dml_cli.arguments.embed import add_embed_parser
from keras_dml_cli.arguments.evaluate import add_evaluate_parser
from keras_dml_cli.arguments.export import add_export_parser
from keras_dml_cli.arguments.report import add_report_parser
from keras_dml_cli.arguments.search import add_search_parser
from keras_dml_cli.arguments.train import add_train_parser
from keras_dml_cli.arguments.zoo import add_zoo_parser
from keras_dml_cli.errors import ERROR_PREFIX
from keras_dml_cli.plugins import plugin_modules


class _Parser(argparse.ArgumentParser):
    """An `ArgumentParser` whose usage errors (every subcommand's too) start `keras-dml: error:`."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, f"{ERROR_PREFIX} {message}\n")


def build_parser(argv=None):
    """The argument parser of `keras-dml` (also used to document the CLI).

    `train`'s `--plugin` modules in `argv` are imported first so that its help lists their methods
    (`ValueError` if one cannot be imported).
    """
    parser = _Parser(prog="keras-dml", description="Ensemble deep metric learning for Keras 3.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    # The help lists the built-in methods and losses from tables (keras_dml_cli.names): no
    # TensorFlow import unless `train --plugin` modules must register theirs.
    is_train = bool(argv) and argv[0] == "train"
    add_train_parser(subparsers, plugins=plugin_modules(argv) if is_train else ())
    add_evaluate_parser(subparsers)
    add_demo_parser(subparsers)
    add_report_parser(subparsers)
    add_export_parser(subparsers)
    add_zoo_parser(subparsers)
    add_search_parser(subparsers)
    add_embed_parser(subparsers)
    add_backbones_parser(subparsers)
    return parser
