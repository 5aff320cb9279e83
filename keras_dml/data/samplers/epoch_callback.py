"""`SamplerEpochCallback`: the sampler draws the epoch Keras runs (a resumed run included)."""

import keras


class SamplerEpochCallback(keras.callbacks.Callback):
    """Tells a sampler the epoch Keras is about to run, so a resumed run draws that epoch.

    Args:
        sampler: a sampler with `set_epoch(epoch)` (`MPerClassSampler`, `ClusterMPerClassSampler`).

    Examples:
    >>> # sampler = MPerClassSampler(train.labels, m=4, batch_size=64, seed=0)
    >>> # model.fit(train.as_tf_dataset(True, sampler=sampler, seed=0), epochs=10,
    >>> #           callbacks=[SamplerEpochCallback(sampler), BackupAndRestore("backup")])
    """

    def __init__(self, sampler):
        super().__init__()
        if not hasattr(sampler, "set_epoch"):
            raise ValueError(
                "`SamplerEpochCallback` needs a sampler with `set_epoch(epoch)`, e.g. "
                f"MPerClassSampler. Received: sampler={type(sampler).__name__}"
            )
        self.sampler = sampler

    def on_epoch_begin(self, epoch, logs=None):
        self.sampler.set_epoch(epoch)
