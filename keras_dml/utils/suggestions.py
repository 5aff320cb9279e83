"""`Did you mean ...?` for a misspelt name or keyword: one rule for every registry and entry."""

import difflib

# difflib's similarity ratio a known name needs to be suggested.
CUTOFF = 0.6


def _normal(name):
    return str(name).strip().lower().replace("-", "_")


def closest(name, known, cutoff=CUTOFF):
    """The known name closest to `name` (case, `-` and `_` ignored), or `None` when none is close.

    Examples:
    >>> closest("Contrastiv", ["contrastive", "triplet"])
    'contrastive'
    """
    by_normal = {_normal(candidate): candidate for candidate in sorted(known, key=str)}
    match = difflib.get_close_matches(_normal(name), list(by_normal), n=1, cutoff=cutoff)
    return by_normal[match[0]] if match else None


def did_you_mean(name, known, cutoff=CUTOFF):
    """The hint for a misspelt name: `" Did you mean 'x'?"`, or `""` when no name is close."""
    match = closest(name, known, cutoff)
    return f" Did you mean {match!r}?" if match is not None else ""


def did_you_mean_keys(unknown, known, cutoff=CUTOFF):
    """The hint for misspelt keywords: one `did_you_mean`, or each match with what it replaces.

    Examples:
    >>> did_you_mean_keys(["marign", "betta"], ["margin", "beta"])
    " Did you mean 'margin' for 'marign', 'beta' for 'betta'?"
    """
    unknown, known = list(unknown), list(known)
    if len(unknown) == 1:
        return did_you_mean(unknown[0], known, cutoff)
    matches = [(key, closest(key, known, cutoff)) for key in unknown]
    pairs = [f"{match!r} for {key!r}" for key, match in matches if match is not None]
    return f" Did you mean {', '.join(pairs)}?" if pairs else ""
