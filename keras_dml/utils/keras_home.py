"""Where keras-dml keeps downloaded and converted files: `<KERAS_HOME or ~/.keras>/keras_dml`."""

import os
from pathlib import Path


def keras_dml_home():
    """`$KERAS_HOME/keras_dml`, else `~/.keras/keras_dml` (`/tmp/.keras/keras_dml` if read-only)."""
    base = os.environ.get("KERAS_HOME")
    if not base:
        base = os.path.join(os.path.expanduser("~"), ".keras")
        parent = base if os.path.isdir(base) else os.path.dirname(base)
        if not os.access(parent, os.W_OK):
            base = os.path.join("/tmp", ".keras")
    return Path(base) / "keras_dml"
