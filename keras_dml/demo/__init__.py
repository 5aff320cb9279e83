"""`keras-dml demo`: every method trained briefly on the bundled digits, compared and exported."""

from keras_dml.demo.run import (
    BASE_CONFIG,
    demo_config,
    demo_methods,
    demo_run_config,
    format_table,
    run_demo,
)

__all__ = [
    "BASE_CONFIG",
    "demo_config",
    "demo_methods",
    "demo_run_config",
    "format_table",
    "run_demo",
]
