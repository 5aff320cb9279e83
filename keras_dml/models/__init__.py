from keras_dml.models.embedding_model import EmbeddingModel

__all__ = ["EmbeddingModel"]
