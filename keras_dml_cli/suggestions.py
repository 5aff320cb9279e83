"""The one-line error for a misspelt name on the command line, as `Registry`'s, without Keras."""

import difflib


def unknown_name(kind, name, known, plural):
    """A `ValueError` naming the unknown `name`, the closest of `known` and all of them."""
    key = str(name).strip().lower().replace("-", "_")
    match = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    hint = f" Did you mean {match[0]!r}?" if match else ""
    return ValueError(f"Unknown {kind} {name!r}.{hint} Known {plural}: {sorted(known)}.")
