"""`--rerank NAME` and `--rerank-option KEY=VALUE` of `keras-dml search` and `evaluate`."""

from keras_dml_cli.catalogue import catalogue
from keras_dml_cli.suggestions import unknown_name


def add_rerank_arguments(parser):
    """Adds `--rerank` and `--rerank-option` to a sub-command's parser."""
    parser.add_argument(
        "--rerank",
        metavar="NAME",
        help=f"re-rank the neighbours: {', '.join(catalogue()['rerank'])} (default: none)",
    )
    parser.add_argument(
        "--rerank-option",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="a re-ranking parameter, e.g. k1=20 or top_n=5 (repeat for several)",
    )


def check_rerank_name(args):
    """Refuses an unknown `--rerank` name before Keras loads (its options are checked on use)."""
    if args.rerank is not None and args.rerank not in catalogue()["rerank"]:
        raise unknown_name("rerank", args.rerank, catalogue()["rerank"], "rerank methods")
