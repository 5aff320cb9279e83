"""`keras-dml train --method baseline`: one `EmbeddingModel` trained with the configured loss."""

from keras_dml.methods.registry import register_method
from keras_dml.models.embedding_model import EmbeddingModel


@register_method(
    "baseline",
    description="single embedding: backbone, pooling, linear layer, L2 (the reference point)",
    model=EmbeddingModel,
    tiny={"embedding_dim": 16, "num_learners": 2},
    # Normalised softmax (Zhai & Wu, BMVC 2019) is the strongest of the common recipes in the
    # many-class comparison of `benchmarks/accuracy/run.py` and in pytorch-metric-learning's own
    # runs on the same data; the margin loss it replaces as the default trailed it by far in MAP@R.
    default_loss={"name": "normalized_softmax"},
    title="Single-embedding baseline",
    demo={"model": {"embedding_dim": 64}},
)
def build_baseline(config, backbone, splits=None):
    """`EmbeddingModel(backbone, **config["model"])`."""
    del splits
    return EmbeddingModel(backbone, **config["model"])
