"""`--set KEY=VALUE` overrides of a run configuration, and merging them into one."""

import contextlib
import json


def parse_overrides(pairs):
    """Turns `--set KEY=VALUE` strings (JSON values, dotted keys nest) into a dict of overrides.

    Raises:
        ValueError: for an entry without `=`.

    Examples:
    >>> parse_overrides(["epochs=3", "model.num_learners=2"])
    {'epochs': 3, 'model': {'num_learners': 2}}
    """
    overrides = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(
                f"--set needs KEY=VALUE, e.g. --set epochs=3 or --set model.num_learners=2. "
                f"Received: {pair!r}"
            )
        with contextlib.suppress(json.JSONDecodeError):
            value = json.loads(value)
        *parents, leaf = key.split(".")
        target = overrides
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    return overrides


def merge_overrides(config, overrides):
    """A copy of `config` with `overrides` applied, nested dicts merged key by key.

    Args:
        config: dict. A (partial) run configuration.
        overrides: dict or `None`, e.g. from `parse_overrides`.

    Examples:
    >>> merge_overrides({"model": {"embedding_dim": 64}}, {"model": {"num_learners": 2}})
    {'model': {'embedding_dim': 64, 'num_learners': 2}}
    """
    merged = dict(config)
    for key, value in (overrides or {}).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_overrides(merged[key], value)
        else:
            merged[key] = value
    return merged
