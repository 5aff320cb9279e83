"""`--rerank NAME` and `--rerank-option KEY=VALUE` of `keras-dml search` and `evaluate`."""

# The names of `keras_dml.search.rerank.RERANKERS`, written out so that `--help` imports nothing.
RERANK_NAMES = ("aqe", "alpha_qe", "dba", "k_reciprocal")


def add_rerank_arguments(parser):
    """Adds `--rerank` and `--rerank-option` to a sub-command's parser."""
    parser.add_argument(
        "--rerank",
        metavar="NAME",
        help=f"re-rank the neighbours: {', '.join(RERANK_NAMES)} (default: none)",
    )
    parser.add_argument(
        "--rerank-option",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="a re-ranking parameter, e.g. k1=20 or top_n=5 (repeat for several)",
    )
