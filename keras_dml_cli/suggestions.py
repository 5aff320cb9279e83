"""The one-line error for a misspelt name on the command line, before the library loads.

It reads as `keras_dml.utils.registry.Registry`'s own ("Unknown loss 'contrastiv'. Did you mean
'contrastive'? Known losses: [...]"); the front end cannot import keras_dml (it imports Keras),
so the closest name is found here with difflib, as `keras_dml.utils.suggestions` does.
"""

import difflib


def unknown_name(kind, name, known, plural):
    """A `ValueError` naming the unknown `name`, the closest of `known` and all of them."""
    key = str(name).strip().lower().replace("-", "_")
    match = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    hint = f" Did you mean {match[0]!r}?" if match else ""
    return ValueError(f"Unknown {kind} {name!r}.{hint} Known {plural}: {sorted(known)}.")
