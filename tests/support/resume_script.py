"""A tiny Divide & Conquer run that can kill itself, for the exact-resume tests.

Run by `tests/methods/test_resume_exact.py` in a subprocess: `python tests/support/resume_script.py
OUT_DIR [dc|hdc]`. With `KERAS_DML_TEST_KILL_AT=<epoch>:<step>` the process sends itself SIGKILL
when batch `<step>` of epoch `<epoch>` is about to start (the batches before it are trained), as a
crash would; running the same command again resumes the run through `keras_dml.training.train`'s
`BackupAndRestore`. The kill switch lives here, in the test script, never in the library. At the end
it writes `OUT_DIR/weights.npz` (every model variable, in order) next to `train`'s `metrics.json`
and `history.json`.

The run: digits (4 training classes), the `convnet` backbone, 2 learners, crop + flip
augmentation, the margin loss with distance-weighted sampling (its `SeedGenerator` draws every
step), 4 epochs of 5 batches: divisions at epochs 0 and 2, the conquer stage at epoch 3. With
`hdc`: hierarchical D&C splitting into 2 learners at epoch 1, re-clustering at epoch 2 (each
division freezes the backbone for its epoch), fine-tuning at epoch 3.
"""

import os
import signal
import sys

EPOCHS = 4
STEPS_PER_EPOCH = 5

CONFIG = {
    "method": "dc",
    "dataset": "digits",
    "image_size": 32,
    "augmentation": "crop_flip",
    "backbone": {"name": "convnet"},
    "model": {"embedding_dim": 16, "num_learners": 2},
    "epochs": EPOCHS,
    "batch_size": 16,
    "m_per_class": 4,
    "seed": 3,
    "method_options": {
        "recluster_every": 2,
        "conquer_epoch": 3,
        "epoch_length": STEPS_PER_EPOCH,
        "kmeans_niter": 10,
        "kmeans_nredo": 1,
        "log_learner_recall": False,
    },
}


HIERARCHICAL_CONFIG = {
    **CONFIG,
    "method": "hdc",
    "model": {"embedding_dim": 16, "max_learners": 2},
    "method_options": {
        "division_every": 1,
        "finetune_epoch": 3,
        "freeze_backbone": True,
        "split_attempts": 3,
        "epoch_length": STEPS_PER_EPOCH,
        "kmeans_niter": 10,
        "kmeans_nredo": 1,
    },
}


def kill_switch(kill_at, kill):
    """A callback calling `kill()` when batch `<step>` of epoch `<epoch>` (`kill_at`) begins."""
    import keras

    kill_epoch, kill_step = (int(part) for part in kill_at.split(":"))

    class KillAt(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_batch_begin(self, batch, logs=None):
            if (self.epoch, batch) == (kill_epoch, kill_step):
                kill()

    return KillAt()


def train_run(output_dir, config, killer=None):
    """Trains (or resumes) `config` into `output_dir`, then writes `weights.npz`."""
    import keras
    import numpy as np

    from keras_dml.training import train

    result = train(
        config, output_dir, verbose=0, extra_callbacks=[killer] if killer else [], report=False
    )
    weights = [keras.ops.convert_to_numpy(v) for v in result["model"].variables]
    np.savez(os.path.join(output_dir, "weights.npz"), *weights)


def main(output_dir, method="dc"):
    kill_at = os.environ.get("KERAS_DML_TEST_KILL_AT")
    killer = None
    if kill_at:
        killer = kill_switch(kill_at, lambda: os.kill(os.getpid(), signal.SIGKILL))
    train_run(output_dir, HIERARCHICAL_CONFIG if method == "hdc" else CONFIG, killer)


if __name__ == "__main__":
    main(*sys.argv[1:])
