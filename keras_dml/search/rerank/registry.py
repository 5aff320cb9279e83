"""The re-ranking methods by name, and `resolve_rerank`: a `rerank=` argument to a method."""

from keras_dml.search.rerank.base import Reranker
from keras_dml.utils.registry import Registry

RERANKERS = Registry("rerank", plural="rerank methods")


def register_reranker(cls):
    """Class decorator registering a `Reranker` subclass under its `name`."""
    return RERANKERS.register(cls.name, cls)


def resolve_rerank(rerank):
    """The `Reranker` a `rerank=` argument (name, `{"name": ..., **params}` dict, object) names.

    Raises:
        ValueError: an unknown name (with the closest one) or parameter, or a bad value.

    Examples:
    >>> resolve_rerank({"name": "alpha_qe", "top_n": 2}).get_config()
    {'name': 'alpha_qe', 'top_n': 2, 'alpha': 3.0}
    """
    if rerank is None or isinstance(rerank, Reranker):
        return rerank
    if isinstance(rerank, dict):
        params = dict(rerank)
        name = params.pop("name", None)
    elif isinstance(rerank, str):
        name, params = rerank, {}
    else:
        raise ValueError(
            f"`rerank` must be None, a name, a dict with 'name' or a Reranker. Received: {rerank!r}"
        )
    return RERANKERS.get(name)(**params)


def parse_rerank_options(name, options):
    """The `rerank=` dict of the CLI's `--rerank NAME` and `--rerank-option KEY=VALUE` entries.

    Examples:
    >>> parse_rerank_options("k_reciprocal", ["k1=10", "lambda=0.5"])
    {'name': 'k_reciprocal', 'k1': 10, 'lambda': 0.5}
    """
    options = list(options or [])
    if name is None:
        if options:
            raise ValueError("--rerank-option needs --rerank NAME; add --rerank aqe (or another).")
        return None
    spec = {"name": name}
    for option in options:
        key, sep, text = option.partition("=")
        try:
            value = float(text) if sep else None
        except ValueError:
            value = None
        if value is None:
            raise ValueError(f"--rerank-option takes KEY=NUMBER, e.g. k1=20. Received: {option!r}")
        spec[key.strip()] = int(value) if value.is_integer() and "." not in text else value
    return spec
