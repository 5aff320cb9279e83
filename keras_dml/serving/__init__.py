"""What every serving path accepts: the input contract of keras-dml models and their exports.

See `keras_dml.serving.input_contract` for the rule (what is refused, what is warned, sizes).

Examples:
>>> import numpy as np
>>> from keras_dml.serving import ImageContract
>>> ImageContract((8, 8, 3)).check(np.zeros((1, 8, 8, 3), np.uint8)).dtype
dtype('uint8')
"""

from keras_dml.serving.input_contract import (
    ImageContract,
    InputContractError,
    check_embeddings,
    check_image_tensor,
    decode_image,
    nan_rows_for_nonfinite_images,
)

__all__ = [
    "ImageContract",
    "InputContractError",
    "check_embeddings",
    "check_image_tensor",
    "decode_image",
    "nan_rows_for_nonfinite_images",
]
