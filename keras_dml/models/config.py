"""Deprecated: the run configuration moved to `keras_dml.training.run_config`."""

import warnings

from keras_dml.training.run_config import (  # noqa: F401 (re-exported for old imports)
    DEFAULTS,
    KNOWN_KEYS,
    PRECISIONS,
    STRATEGIES,
    check_config_augmentation,
    check_values,
    load_config,
    merge_overrides,
    parse_overrides,
    resolve_config,
)

warnings.warn(
    "keras_dml.models.config moved to keras_dml.training.run_config; import from there.",
    DeprecationWarning,
    stacklevel=2,
)
