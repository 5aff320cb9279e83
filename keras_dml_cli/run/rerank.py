"""The `Reranker` of `keras-dml search` and `evaluate`'s `--rerank` arguments."""

from keras_dml.search.rerank import parse_rerank_options, resolve_rerank

__all__ = ["rerank_from_args"]


def rerank_from_args(args):
    """The checked `Reranker` of the parsed arguments, or `None` (bad names fail here, early)."""
    return resolve_rerank(parse_rerank_options(args.rerank, args.rerank_option))
