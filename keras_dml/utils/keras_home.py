"""Where keras-dml keeps downloaded and converted files: `<KERAS_HOME or ~/.keras>/keras_dml`."""

import os
from pathlib import Path


def keras_dml_home():
    """Returns `$KERAS_HOME/keras_dml`, else `~/.keras/keras_dml`, like Keras' own cache.

    Falls back to `/tmp/.keras/keras_dml` when the home folder is not writable. The zoo cache
    (`keras_dml.zoo.cache_root`) and the converted backbone weights live in sub-folders.

    Returns:
        `pathlib.Path` (not necessarily existing yet).

    Examples:
    >>> keras_dml_home().name
    'keras_dml'
    >>> keras_dml_home() / "zoo"  # doctest: +SKIP
    PosixPath('/root/.keras/keras_dml/zoo')
    """
    base = os.environ.get("KERAS_HOME")
    if not base:
        base = os.path.join(os.path.expanduser("~"), ".keras")
        parent = base if os.path.isdir(base) else os.path.dirname(base)
        if not os.access(parent, os.W_OK):
            base = os.path.join("/tmp", ".keras")
    return Path(base) / "keras_dml"
