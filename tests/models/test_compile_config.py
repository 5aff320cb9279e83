"""A `.keras` file's compile arguments load on any backend (`deserialize_compile_config`)."""

import keras

from keras_dml.models.model_loss import deserialize_compile_config


def test_a_backend_optimizer_class_is_read_by_its_public_name():
    # What Keras saves for `keras.optimizers.Adam` compiled on PyTorch.
    saved = {
        "optimizer": {
            "module": "keras.src.backend.torch.optimizers.torch_adam",
            "class_name": "Adam",
            "config": {"name": "adam", "learning_rate": 0.25},
            "registered_name": "Adam",
        },
        "loss": None,
    }
    config = deserialize_compile_config(saved)
    # The running backend's own Adam class (on TensorFlow, not PyTorch's from the saved module).
    assert type(config["optimizer"]) is type(keras.optimizers.Adam())
    assert float(keras.ops.convert_to_numpy(config["optimizer"].learning_rate)) == 0.25
    assert saved["optimizer"]["module"].startswith("keras.src.backend.torch")  # input untouched
