"""The embedding pass over the training set before each division (D&C and hierarchical D&C)."""

import keras
import numpy as np

from keras_dml.data.batch_streams import iterate_batches
from keras_dml.evaluation.evaluate import evaluate
from keras_dml.pairs.distances import l2_normalize
from keras_dml.serving.embed import embed


class Forward:
    """Adapter giving a compiled forward function the `predict_on_batch` interface of `embed`."""

    def __init__(self, fn):
        self.fn = fn
        if keras.backend.backend() == "tensorflow":
            import tensorflow as tf  # optional/heavy dependency: tensorflow (its backend only)

            self.predict_on_batch = lambda images: fn(tf.convert_to_tensor(images, tf.float32))
        else:  # JAX, PyTorch: Keras tensors in, NumPy out
            self.predict_on_batch = lambda images: keras.ops.convert_to_numpy(
                fn(keras.ops.convert_to_tensor(np.asarray(images), "float32"))
            )

    def __call__(self, images):
        return self.predict_on_batch(images)


def compiled_forward(model, features):
    """A `Forward` of the model output, or of its L2-normalised pooled features if `features`."""

    if keras.backend.backend() != "tensorflow":

        def forward(images):
            if features:
                return l2_normalize(model.features(images, training=False))
            return model(images, training=False)

        return Forward(forward)

    import tensorflow as tf  # optional/heavy dependency: tensorflow (its backend only)

    @tf.function(reduce_retracing=True)
    def compiled(images):
        if features:
            pooled = model.features(images, training=False)
            return tf.math.l2_normalize(tf.cast(pooled, "float32"), axis=-1)
        return model(images, training=False)

    return Forward(compiled)


# Evaluation-preprocessed training images up to this size stay in memory between divisions.
CACHE_BYTES = 1 << 30


def cached_inputs(data, batch_size, image_size=None, cache_bytes=CACHE_BYTES):
    """The evaluation pipeline of an `ImageDataset`, in memory up to `cache_bytes` of images.

    Args:
        data: `ImageDataset`. The split to embed.
        batch_size: int. Images per batch.
        image_size: int or `None`. The model's input size, as in training. Defaults to `None`
            (the dataset's).
        cache_bytes: int. Largest pipeline kept in memory. Defaults to `CACHE_BYTES`.

    Returns:
        A batched dataset of `(images, labels)` in index order, or those two arrays.
    """
    dataset = data.as_dataset(training=False, batch_size=batch_size, image_size=image_size)
    if isinstance(dataset, keras.utils.PyDataset):
        height, width = dataset[0][0].shape[1:3]
        if len(data) * height * width * 3 * 4 <= cache_bytes:
            return stream_arrays(dataset)
        return dataset
    height, width = dataset.element_spec[0].shape[1:3]
    if height and width and len(data) * height * width * 3 * 4 <= cache_bytes:
        dataset = dataset.cache()
    return dataset


def stream_arrays(stream):
    """The `(images, labels)` batches of a `keras.utils.PyDataset` as two arrays, in order."""
    batches = list(iterate_batches(stream))
    images = np.concatenate([np.asarray(images, np.float32) for images, _ in batches])
    return images, np.concatenate([np.asarray(labels) for _, labels in batches])


def embed_vectors(forward, data, batch_size, with_labels=False):
    """Embeds `data` in index order: float32 `[N, D]`, or `(vectors, labels)` if `with_labels`.

    Raises:
        ValueError: when `with_labels` and `data` carries no labels.
    """
    vectors, labels = embed(forward, data, batch_size=batch_size, verbose=False)
    vectors = np.asarray(vectors, np.float32)
    if with_labels:
        if labels is None:
            raise ValueError("`val_data` must carry labels for per-learner Recall@1.")
        return vectors, np.asarray(labels)
    return vectors


def learner_recall_at_1(embeddings, labels, slices):
    """Recall@1 of each learner's `(start, end)` column slice of `embeddings`, as floats."""
    return [
        float(evaluate(embeddings[:, a:b], labels, recall_at=(1,), metrics=("recall",))["recall@1"])
        for a, b in slices
    ]


def numeric_logs(entry):
    """The numeric `dc_*` Keras logs of a `DivideAndConquerCallback.divide` entry."""
    logs = {
        "dc_division": float(entry["division"]),
        "dc_min_cluster_size": float(min(entry["cluster_sizes"])),
        "dc_max_cluster_size": float(max(entry["cluster_sizes"])),
        "dc_recluster_seconds": entry["embed_seconds"]
        + entry["kmeans_seconds"]
        + entry["match_seconds"],
    }
    if entry["nmi_previous"] is not None:
        logs["dc_nmi_previous"] = float(entry["nmi_previous"])
    if entry.get("by_class"):
        logs["dc_division_by_class"] = 1.0  # the class-mean fallback of `divide_samples`
    for k, value in enumerate(entry.get("learner_recall@1", [])):
        logs[f"dc_learner_{k}_recall@1"] = float(value)
    return logs


def embed_training_set(forward, data, labels, batch_size=256):
    """Embeds `data` in index order as float32 `[N, D]`.

    Raises:
        ValueError: when the number of vectors differs from the number of labels.
    """
    vectors, _ = embed(forward, data, batch_size=batch_size, verbose=False)
    if vectors.shape[0] != len(labels):
        raise ValueError(
            f"`train_data` gave {vectors.shape[0]} vectors for {len(labels)} labels; "
            "pass the unshuffled training split in the sampler's index order."
        )
    return np.asarray(vectors, np.float32)
