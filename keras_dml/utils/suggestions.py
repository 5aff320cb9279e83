"""`Did you mean ...?` for a misspelt name or keyword: one rule for every registry and entry.

Losses, methods, backbones, datasets, optimizers, run-configuration keys and the keywords of
`method_options`, `loss`, `optimizer` and `dataset_options` all phrase their hint with these two
functions, so a typo anywhere reads the same: `Unknown loss 'contrastiv'. Did you mean
'contrastive'? ...`.
"""

import difflib

# difflib's similarity ratio a known name needs to be suggested.
CUTOFF = 0.6


def _normal(name):
    return str(name).strip().lower().replace("-", "_")


def closest(name, known, cutoff=CUTOFF):
    """The known name closest to `name` (case, `-` and `_` ignored), or `None` when none is close.

    Args:
        name: the misspelt name (any value; compared as text).
        known: iterable of str. The valid names.
        cutoff: float in [0, 1]. Similarity a match needs. Defaults to `CUTOFF`.

    Returns:
        str or `None`.

    Examples:
    >>> closest("Contrastiv", ["contrastive", "triplet"])
    'contrastive'
    """
    by_normal = {_normal(candidate): candidate for candidate in sorted(known, key=str)}
    match = difflib.get_close_matches(_normal(name), list(by_normal), n=1, cutoff=cutoff)
    return by_normal[match[0]] if match else None


def did_you_mean(name, known, cutoff=CUTOFF):
    """The hint for a misspelt name: `" Did you mean 'x'?"`, or `""` when no name is close.

    Args:
        name: the misspelt name.
        known: iterable of str. The valid names.
        cutoff: float. See `closest`.

    Returns:
        str, to append to the sentence that names the unknown value.

    Examples:
    >>> did_you_mean("contrastiv", ["contrastive", "margin"])
    " Did you mean 'contrastive'?"
    >>> did_you_mean("xyz", ["contrastive", "margin"])
    ''
    """
    match = closest(name, known, cutoff)
    return f" Did you mean {match!r}?" if match is not None else ""


def did_you_mean_keys(unknown, known, cutoff=CUTOFF):
    """The hint for misspelt keywords: one `did_you_mean`, or each match with what it replaces.

    Args:
        unknown: iterable of str. The keywords that were not accepted.
        known: iterable of str. The accepted keywords.
        cutoff: float. See `closest`.

    Returns:
        str: `" Did you mean 'margin'?"` for one unknown keyword, `" Did you mean 'margin' for
        'marign', 'beta' for 'betta'?"` for several, `""` when none is close.

    Examples:
    >>> did_you_mean_keys(["marign"], ["margin", "beta"])
    " Did you mean 'margin'?"
    >>> did_you_mean_keys(["marign", "betta"], ["margin", "beta"])
    " Did you mean 'margin' for 'marign', 'beta' for 'betta'?"
    """
    unknown, known = list(unknown), list(known)
    if len(unknown) == 1:
        return did_you_mean(unknown[0], known, cutoff)
    matches = [(key, closest(key, known, cutoff)) for key in unknown]
    pairs = [f"{match!r} for {key!r}" for key, match in matches if match is not None]
    return f" Did you mean {', '.join(pairs)}?" if pairs else ""
