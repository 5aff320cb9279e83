"""The conversion table, at its former place: it lives in `keras_dml.backbones.conversions`,
below both the converter and the `weights="imagenet"` look-up (which must not load the
converter)."""

from keras_dml.backbones.conversions import (
    BACKBONES,
    CONVERSIONS,
    SOURCES,
    Conversion,
    conversion_for_options,
    find_conversion,
)

__all__ = [
    "BACKBONES",
    "CONVERSIONS",
    "SOURCES",
    "Conversion",
    "conversion_for_options",
    "find_conversion",
]
