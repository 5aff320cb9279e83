"""Errors of `keras_dml.search`."""


class IndexFormatError(ValueError):
    """A saved index folder is missing files, corrupted, or does not match what it is used with."""
