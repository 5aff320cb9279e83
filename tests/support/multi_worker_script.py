"""One worker of a two-process `MultiWorkerMirroredStrategy` run (test_training_multi_worker.py).

`TF_CONFIG` names the cluster and this worker. The run trains `METHOD` with
`keras_dml.training.train(..., strategy="multi_worker")` on generated in-memory images (the same
on every worker), records per epoch what this worker saw in `RECORD` (JSON lines: the epoch, the
loss, the division count and, for D&C and hierarchical D&C, the sha256 of the cluster assignment
it trains on and the time it spent clustering), and with `STOP_AFTER` >= 0 stops the run after
that epoch, once the backup of the epoch is written (an interrupted run that the same command
resumes).

    python tests/support/multi_worker_script.py METHOD OUTPUT STATE_DIR RECORD EPOCHS STOP_AFTER
"""

import hashlib
import json
import os
import sys

import numpy as np


class InterruptedRunError(Exception):
    """Raised by `Recorder` to stop the run after an epoch, as a killed job would stop."""


def main(method, output, state_dir, record, epochs, stop_after):
    import keras
    import tensorflow as tf

    keras.config.disable_traceback_filtering()
    tf.debugging.disable_traceback_filtering()

    from keras_dml.data.datasets import from_arrays
    from keras_dml.training import train

    class Recorder(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs = logs or {}
            entry = {"epoch": epoch, "loss": float(logs["loss"])}
            model = self.model
            if hasattr(model, "division_count"):  # D&C: the assignment file of the division
                count = int(keras.ops.convert_to_numpy(model.division_count))
                path = os.path.join(state_dir, f"division_{count:04d}.npz")
                assignment = np.load(path)["assignment"].astype(np.int64)
                seconds = logs.get("dc_recluster_seconds", -1.0)
            if hasattr(model, "recluster_count"):  # HDC: the assignment the model holds
                count = int(keras.ops.convert_to_numpy(model.recluster_count))
                assignment = np.asarray(model.get_cluster_assignment(), np.int64)
                seconds = logs.get("hdc_recluster_seconds", -1.0)
                entry["learners"] = model.active_learners
            if method in ("dc", "hdc"):
                entry.update(
                    division=count,
                    assignment_sha256=hashlib.sha256(assignment.tobytes()).hexdigest(),
                    recluster_seconds=float(seconds),
                )
            with open(record, "a") as f:
                f.write(json.dumps(entry) + "\n")
            if epoch == stop_after:
                raise InterruptedRunError(f"stopped after epoch {epoch}")

    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(12), 8)
    images = (rng.random((labels.size, 32, 32, 3)) * 255).astype("uint8")
    splits = {
        split: from_arrays(images, labels, split=split, test_fraction=0.25, val_fraction=0.2)
        for split in ("train", "val", "test")
    }
    config = {
        "method": method,
        "dataset": "arrays",
        "strategy": "multi_worker",
        "backbone": "convnet",
        "epochs": epochs,
        "batch_size": 16,
        "m_per_class": 4,
        "model": {"embedding_dim": 16},
        "method_options": {},
    }
    if method == "dc":
        config["model"]["num_learners"] = 2
        # Divided in every epoch (no merge) so that each epoch tests the chief's division.
        config["method_options"] = {
            "recluster_every": 1,
            "state_dir": state_dir,
            "conquer_epoch": None,
        }
    if method == "hdc":  # one learner, split in two at the first division
        config["model"]["max_learners"] = 2
        config["method_options"] = {"division_every": 1}
    try:
        result = train(
            config, output, verbose=0, splits=splits, report=False, extra_callbacks=[Recorder()]
        )
    except InterruptedRunError as stop:
        print("INTERRUPTED", stop, flush=True)
        return
    print("WROTE", result["output_dir"], flush=True)
    print("METRICS", json.dumps(result["metrics"]), flush=True)


if __name__ == "__main__":
    method, output, state_dir, record, epochs, stop_after = sys.argv[1:7]
    main(method, output, state_dir, record, int(epochs), int(stop_after))
