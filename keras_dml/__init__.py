"""keras-dml: ensemble deep metric learning for Keras 3."""

__version__ = "0.1.0"
