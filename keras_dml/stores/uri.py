"""Store addresses: a Milvus Lite file (`milvus:///path/file.db` or `path/file.db`) or a server."""

import os

DEFAULT_COLLECTION = "embeddings"
SERVER_SCHEMES = ("http://", "https://", "tcp://", "grpc://")


def store_address(uri):
    """The pymilvus address of a store URI: an absolute `.db` path, or the server URL as given.

    Args:
        uri: str. `milvus:///abs/file.db`, `milvus://rel/file.db`, `file.db` or
            `http://host:19530`.

    Returns:
        str.

    Raises:
        ValueError: a URI that names neither a `.db` file nor a Milvus server.

    Examples:
    >>> store_address("http://localhost:19530")
    'http://localhost:19530'
    >>> store_address("milvus:///tmp/photos.db")
    '/tmp/photos.db'
    """
    uri = os.fspath(uri)
    if uri.startswith(SERVER_SCHEMES):
        return uri
    path = uri.removeprefix("milvus://")
    if not path.endswith(".db"):
        raise ValueError(
            "--store must be a Milvus Lite file (milvus:///path/file.db or a path ending in .db) "
            f"or a Milvus server (http://host:19530). Received: {uri!r}"
        )
    return os.path.abspath(path)


def is_local(uri):
    """Whether a store URI names a Milvus Lite file (one process at a time) rather than a server."""
    return not os.fspath(uri).startswith(SERVER_SCHEMES)
