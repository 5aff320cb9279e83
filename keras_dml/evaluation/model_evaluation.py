"""`evaluate_model`: the test-protocol metrics of a model on loaded splits, on every backend."""

from keras_dml.evaluation.evaluate import evaluate
from keras_dml.serving.embed import embed


def evaluate_model(model, splits, batch_size=64, image_size=None, verbose=0, rerank=None):
    """Retrieval metrics of `model` on the test protocol in `splits`.

    Each split is embedded through `ImageDataset.as_dataset(training=False)`: a `tf.data`
    pipeline on TensorFlow, a `keras.utils.PyDataset` on JAX and PyTorch (no TensorFlow needed).
    `splits["query"]` and `splits["gallery"]` give the query/gallery protocol (In-shop);
    otherwise every image of `splits["test"]` queries all the others.

    Args:
        model: `keras.Model` (or an `Embedder`) returning one embedding `[B, D]` per batch.
        splits: dict of `ImageDataset`s: `test`, or `query` and `gallery`.
        batch_size: int. Embedding batch size. Defaults to `64`.
        image_size: int or `None`. Evaluation crop size. Defaults to `None` (the dataset's).
        verbose: int. 1 shows progress bars. Defaults to `0`.
        rerank: re-ranking of the neighbours (see `keras_dml.search.rerank`). Defaults to
            `None`.

    Returns:
        dict of metrics (`recall@K`, `map@r`, `r_precision`, `nmi`, counts), as
        `keras_dml.evaluation.evaluate` returns them.

    Examples:
    >>> splits = {"test": keras_dml.data.load_dataset("digits", split="test")}  # doctest: +SKIP
    >>> evaluate_model(model, splits)["recall@1"]  # doctest: +SKIP
    0.97

    References:
        Musgrave et al., "A Metric Learning Reality Check", ECCV 2020 (MAP@R, R-Precision);
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR
        2019 (Recall@K, NMI).
    """

    def embeddings_of(data):
        batches = data.as_dataset(training=False, batch_size=batch_size, image_size=image_size)
        return embed(model, batches, verbose=bool(verbose))

    if "query" in splits:
        gallery, gallery_labels = embeddings_of(splits["gallery"])
        query, query_labels = embeddings_of(splits["query"])
        return evaluate(
            gallery,
            gallery_labels,
            query_embeddings=query,
            query_labels=query_labels,
            rerank=rerank,
        )
    embeddings, labels = embeddings_of(splits["test"])
    return evaluate(embeddings, labels, rerank=rerank)
