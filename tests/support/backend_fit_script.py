"""Every registered method fits two steps and evaluates on the backend of `KERAS_BACKEND`.

Run by `tests/methods/test_backends.py` in a subprocess per backend (Keras reads the backend at
import):
`KERAS_BACKEND=jax python tests/support/backend_fit_script.py OUT_DIR`. Batches come from `tf.data`
(what `keras_dml.data` produces) and from NumPy arrays; each trained model is saved to
`OUT_DIR/<method>.keras` with its outputs on fixed images, for loading on another backend.
"""

import json
import os
import sys

import numpy as np


def main(out_dir):
    import keras
    import tensorflow as tf

    from keras_dml import backbones
    from keras_dml.methods import get_method, list_methods
    from keras_dml.methods.defaults import compile_with_config
    from tests.support.configs import config_dict

    rng = np.random.default_rng(0)
    images = (rng.random((16, 32, 32, 3)) * 255).astype("float32")
    labels = np.array([0, 1, 2, 3] * 4, dtype="int32")
    probe = (rng.random((3, 32, 32, 3)) * 255).astype("float32")
    report = {"backend": keras.backend.backend(), "methods": {}}
    for name in list_methods():
        spec = get_method(name)
        config = config_dict(
            {
                "method": name,
                "dataset": "digits",
                "loss": {"name": "contrastive"},
                "optimizer": {"name": "adam", "learning_rate": 1e-3},
            }
        )
        keras.utils.set_random_seed(0)
        model = spec.tiny_model(backbones.get("convnet", input_shape=(32, 32, 3)))
        (spec.compile or compile_with_config)(config, model)
        targets = {"labels": labels, "clusters": np.full((16,), 1, "int32")}
        if name not in ("dc", "hdc"):
            targets = labels
        if name == "hdc":
            model.split_learners([0, 0])
        dataset = tf.data.Dataset.from_tensor_slices((images, targets)).batch(8)
        history = model.fit(dataset, epochs=1, verbose=0).history  # two steps from tf.data
        model.fit(images, targets, batch_size=8, epochs=1, shuffle=False, verbose=0)
        metrics = model.evaluate(images, labels, batch_size=8, verbose=0, return_dict=True)
        losses = [float(v) for v in history["loss"]] + [float(metrics["loss"])]
        if not np.all(np.isfinite(losses)):
            raise AssertionError(f"{name}: non-finite losses {losses}")
        model.save(os.path.join(out_dir, f"{name}.keras"))
        np.save(os.path.join(out_dir, f"{name}.npy"), keras.ops.convert_to_numpy(model(probe)))
        report["methods"][name] = {"loss": losses}
        print("OK", name, flush=True)
    np.save(os.path.join(out_dir, "probe.npy"), probe)
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(sys.argv[1])
