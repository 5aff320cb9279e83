from keras_dml.utils.imports import MissingDependencyError, is_available, optional_import

__all__ = ["MissingDependencyError", "is_available", "optional_import"]
