"""Deprecated: a method's default hooks moved to `keras_dml.models.method_defaults`."""

import warnings

from keras_dml.models.method_defaults import (  # noqa: F401 (re-exported for old imports)
    accepted_arguments,
    build_augmentation,
    build_loss,
    build_optimizer,
    check_arguments,
    check_loss_entry,
    compile_optimizer_only,
    compile_with_config,
    m_per_class_batches,
    optimizer_names,
    sampled_batches,
    with_batch_composition,
)

warnings.warn(
    "keras_dml.models.hooks moved to keras_dml.models.method_defaults; import from there.",
    DeprecationWarning,
    stacklevel=2,
)
