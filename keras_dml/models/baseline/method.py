"""`keras-dml train --method baseline`: one `EmbeddingModel` trained with the configured loss."""

from keras_dml.models.embedding_model import EmbeddingModel
from keras_dml.models.registry import register_method


@register_method(
    "baseline",
    description="single embedding: backbone, pooling, linear layer, L2 (the reference point)",
    title="Single-embedding baseline",
    tiny=lambda backbone: EmbeddingModel(backbone, embedding_dim=16, num_learners=2),
    demo={"model": {"embedding_dim": 64}},
)
def build_baseline(config, backbone, splits=None):
    """`EmbeddingModel(backbone, **config["model"])`."""
    del splits
    return EmbeddingModel(backbone, **config["model"])
