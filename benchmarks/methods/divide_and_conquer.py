"""Per-epoch cost of Divide & Conquer vs the single-embedding baseline, measured in one run.

Same backbone (`convnet`, 32 px), data (keras_dml `digits` train split), batch size and number of
steps. For D&C (K learners, re-clustering every T epochs) the epoch is split into training steps,
the embedding pass over the training set, k-means and Hungarian matching. The first epoch of each
model (graph tracing) is excluded from the step times.

Targets: D&C step time <= 1.02x baseline; re-clustering amortised over
T epochs <= 15% of a training epoch. The measurements go to the run's record (`--record`,
default `benchmarks/results/speed_divide_and_conquer.json`).

Usage:
    python -m benchmarks.methods.divide_and_conquer --epochs 5 --learners 4 --every 2
"""

import argparse
import time

import keras
import numpy as np

from benchmarks.records import add_record_option, write_record


class EpochTimer(keras.callbacks.Callback):
    """Wall time of each epoch (put it first in the callback list)."""

    def __init__(self):
        super().__init__()
        self.seconds = []
        self.steps = []

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()
        self.steps.append(0)

    def on_train_batch_end(self, batch, logs=None):
        self.steps[-1] += 1

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self._start)


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--learners", type=int, default=4)
    parser.add_argument("--every", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--m", type=int, default=4)
    parser.add_argument("--embed-batch-size", type=int, default=256, help="re-clustering pass")
    parser.add_argument(
        "--steps-per-epoch", type=int, help="cap on the steps of an epoch (default: the data's)"
    )
    add_record_option(parser, "speed_divide_and_conquer.json")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    from keras_dml import backbones
    from keras_dml.data.datasets.registry import load_dataset
    from keras_dml.data.samplers.cluster_m_per_class import ClusterMPerClassSampler
    from keras_dml.data.samplers.m_per_class import MPerClassSampler
    from keras_dml.losses import MarginLoss
    from keras_dml.methods.divide_and_conquer.callback import DivideAndConquerCallback
    from keras_dml.models import EmbeddingModel
    from keras_dml.models.divide_and_conquer import DivideAndConquer

    train = load_dataset("digits", split="train", image_size=32)
    # Digits has few classes; relabel each class into sub-classes so K clusters of several
    # classes exist (timing only, the labels' meaning does not matter here).
    labels = train.labels * 10 + np.arange(len(train.labels)) % 10
    train.labels = labels
    steps = max(1, len(labels) // args.batch_size)
    steps = min(steps, args.steps_per_epoch or steps)
    print(f"data: digits train, {len(labels)} images, {len(np.unique(labels))} classes, 32 px")
    print(f"steps/epoch: {steps}, batch {args.batch_size}, epochs {args.epochs}")

    def make(cls, **kwargs):
        keras.utils.set_random_seed(0)
        model = cls(backbones.get("convnet", input_shape=(32, 32, 3)), embedding_dim=128, **kwargs)
        model.compile(optimizer=keras.optimizers.Adam(1e-4), loss=MarginLoss(seed=0))
        return model

    # Baseline: one embedding, class-balanced batches.
    base_sampler = MPerClassSampler(labels, args.m, args.batch_size, seed=0, num_batches=steps)
    base_data = train.as_tf_dataset(True, args.batch_size, sampler=base_sampler)
    baseline = make(EmbeddingModel)
    base_timer = EpochTimer()
    baseline.fit(base_data, epochs=args.epochs, callbacks=[base_timer], verbose=0)

    # D&C: K learners, cluster-conditioned batches, re-clustering every T epochs.
    sampler = ClusterMPerClassSampler(
        labels, np.zeros_like(labels), args.m, args.batch_size, seed=0, epoch_length=steps
    )
    dc_data = train.as_tf_dataset(True, args.batch_size, sampler=sampler, with_clusters=True)
    dc = make(DivideAndConquer, num_learners=args.learners)
    dc_timer = EpochTimer()
    callback = DivideAndConquerCallback(
        train, labels, sampler, recluster_every=args.every, batch_size=args.embed_batch_size
    )
    dc.fit(dc_data, epochs=args.epochs, callbacks=[dc_timer, callback], verbose=0)

    division = {entry["epoch"]: entry for entry in callback.history}
    recluster = [
        division[e]["embed_seconds"] + division[e]["kmeans_seconds"] + division[e]["match_seconds"]
        if e in division
        else 0.0
        for e in range(args.epochs)
    ]
    dc_train = np.array(dc_timer.seconds) - np.array(recluster)
    print(f"steps run per epoch: baseline {base_timer.steps}, D&C {dc_timer.steps}")
    base_epoch = float(np.sum(base_timer.seconds[1:]) / np.sum(base_timer.steps[1:]) * steps)
    dc_epoch = float(np.sum(dc_train[1:]) / np.sum(dc_timer.steps[1:]) * steps)
    later = [division[e] for e in division if e > 0] or list(division.values())
    embed_s = float(np.mean([d["embed_seconds"] for d in later]))
    kmeans_s = float(np.mean([d["kmeans_seconds"] for d in later]))
    match_s = float(np.mean([d["match_seconds"] for d in later]))
    total = embed_s + kmeans_s + match_s
    print(f"baseline   train epoch {base_epoch:.3f} s  step {1e3 * base_epoch / steps:.2f} ms")
    print(
        f"D&C K={args.learners}  train epoch {dc_epoch:.3f} s  step {1e3 * dc_epoch / steps:.2f} ms"
    )
    print(f"step time ratio D&C / baseline: {dc_epoch / base_epoch:.3f}x (target <= 1.02x)")
    print(
        f"re-clustering (divisions after epoch 0): embed {embed_s:.3f} s, k-means {kmeans_s:.3f} s,"
        f" matching {1e3 * match_s:.2f} ms, total {total:.3f} s"
    )
    print(
        f"re-clustering / training epoch: {total / dc_epoch:.1%} per division, "
        f"{total / args.every / dc_epoch:.1%} amortised over T={args.every} (target <= 15%)"
    )
    ratio, amortised = dc_epoch / base_epoch, total / args.every / dc_epoch
    rows = [
        {
            "what": f"D&C K={args.learners} vs baseline step (convnet 32 px)",
            "result": f"{ratio:.2f}x over {args.epochs - 1} epochs after the first",
            "target": "<= 1.02x",
        },
        {
            "what": f"D&C re-clustering per epoch, T={args.every}",
            "result": f"{amortised:.1%} (embedding pass {embed_s:.2f} s, k-means "
            f"{1e3 * kmeans_s:.0f} ms, matching {1e3 * match_s:.2f} ms)",
            "target": "<= 15 %",
        },
    ]
    measured = {
        "baseline_epoch_seconds": base_epoch,
        "dc_epoch_seconds": dc_epoch,
        "step_ratio": ratio,
        "embed_seconds": embed_s,
        "kmeans_seconds": kmeans_s,
        "match_seconds": match_s,
        "recluster_share_amortised": amortised,
    }
    write_record(args.record, "methods.divide_and_conquer", argv, measured, rows)
    return measured


if __name__ == "__main__":
    main()
