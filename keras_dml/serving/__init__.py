"""What every serving path accepts: the input contract of keras-dml models and their exports."""

from keras_dml.serving.input_contract import (
    ImageContract,
    InputContractError,
    check_embeddings,
    check_image_tensor,
    decode_image,
    nan_rows_for_invalid_images,
)

__all__ = [
    "ImageContract",
    "InputContractError",
    "check_embeddings",
    "check_image_tensor",
    "decode_image",
    "nan_rows_for_invalid_images",
]
