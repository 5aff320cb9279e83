"""Training-step time of `EmbeddingModel` against a plain Keras classifier on the same backbone.

Both models use the same backbone architecture, input size and batch; the classifier is
`backbone -> global average pooling -> Dense(num_classes)` with sparse categorical cross-entropy,
the embedding model is `backbone -> pooling -> Dense(embedding_dim) -> L2` with the chosen metric
loss. Rounds alternate between the models so that load from other processes affects both alike;
each round times `steps` calls of `train_on_batch` after warm-up. The script prints per-round
times, the median per-step time of each model and their ratio (target: <= 1.10).

Usage:
    python -m benchmarks.speed.train_step --backbone convnet --image-size 64 --batch-size 64
    python -m benchmarks.speed.train_step --backbone resnet50 --image-size 224 --batch-size 32 \
        --rounds 3
"""

import argparse
import os
import statistics
import time

import keras
import numpy as np

from benchmarks.records import add_record_option, write_record


def build_models(backbone_name, image_size, embedding_dim, num_classes, loss):
    from keras_dml import backbones, losses
    from keras_dml.models import EmbeddingModel

    def backbone():
        keras.utils.set_random_seed(0)
        return backbones.get(backbone_name, input_shape=(image_size, image_size, 3))

    features = backbone()
    pooled = keras.layers.GlobalAveragePooling2D()(features.output)
    logits = keras.layers.Dense(num_classes)(pooled)
    classifier = keras.Model(features.input, logits, name="classifier")
    classifier.compile(
        optimizer=keras.optimizers.Adam(1e-4),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    embedding = EmbeddingModel(backbone(), embedding_dim=embedding_dim)
    embedding.compile(optimizer=keras.optimizers.Adam(1e-4), loss=losses.get(loss))
    return {"classifier": classifier, "embedding_model": embedding}


def time_steps(model, images, labels, steps):
    start = time.perf_counter()
    for _ in range(steps):
        logs = model.train_on_batch(images, labels, return_dict=True)
    float(logs["loss"])  # wait for the last step
    return (time.perf_counter() - start) / steps


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backbone", default="convnet")
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--m-per-class", type=int, default=4)
    parser.add_argument("--embedding-dim", type=int, default=128)
    parser.add_argument("--loss", default="margin", help="keras_dml.losses name")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=10)
    add_record_option(parser, "speed_train_step.json")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    num_classes = args.batch_size // args.m_per_class
    rng = np.random.default_rng(0)
    size = args.image_size
    images = (rng.random((args.batch_size, size, size, 3)) * 255).astype("float32")
    labels = np.repeat(np.arange(num_classes), args.m_per_class).astype("int32")
    models = build_models(args.backbone, size, args.embedding_dim, num_classes, args.loss)
    for model in models.values():
        time_steps(model, images, labels, args.warmup)

    times = {name: [] for name in models}
    for round_index in range(args.rounds):
        for name, model in models.items():
            times[name].append(time_steps(model, images, labels, args.steps))
        print(
            f"round {round_index}: "
            + ", ".join(f"{n} {t[-1] * 1e3:.1f} ms" for n, t in times.items()),
            flush=True,
        )
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(
        f"\n{args.backbone} {size}px, batch {args.batch_size} ({num_classes} classes x "
        f"{args.m_per_class}), loss {args.loss}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    for name, value in medians.items():
        print(f"{name:>16}: {value * 1e3:8.2f} ms/step (median of {args.rounds} rounds)")
    ratio = medians["embedding_model"] / medians["classifier"]
    print(f"ratio embedding_model / classifier: {ratio:.3f} (target <= 1.10)")
    row = {
        "what": f"`EmbeddingModel` vs plain classifier step ({args.backbone} {size} px, "
        f"batch {args.batch_size})",
        "result": f"{ratio:.3f}x",
        "target": "<= 1.10x",
    }
    measured = {"median_step_seconds": medians, "ratio": ratio, "rounds": times}
    write_record(args.record, "speed.train_step", argv, measured, [row])
    return ratio


if __name__ == "__main__":
    main()
