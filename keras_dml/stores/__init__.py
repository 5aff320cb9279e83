"""Vector stores: embeddings kept in Milvus (Lite or a server), searched as an `EmbeddingIndex`."""

from keras_dml.stores.identity import ModelMismatchError, check_identity, model_identity
from keras_dml.stores.index import StoreIndex
from keras_dml.stores.milvus import MilvusStore, StoreError
from keras_dml.stores.uri import DEFAULT_COLLECTION, store_address

__all__ = [
    "DEFAULT_COLLECTION",
    "MilvusStore",
    "ModelMismatchError",
    "StoreError",
    "StoreIndex",
    "check_identity",
    "model_identity",
    "store_address",
]
