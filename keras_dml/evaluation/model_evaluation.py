"""`evaluate_model`: the test-protocol metrics of a model on loaded splits, on every backend."""

from keras_dml.evaluation.evaluate import evaluate
from keras_dml.serving.embed import embed


def evaluate_model(model, splits, batch_size=64, image_size=None, verbose=0, rerank=None):
    """Retrieval metrics (`evaluate`'s) of `model` on the `test` or `query` / `gallery` splits."""

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
