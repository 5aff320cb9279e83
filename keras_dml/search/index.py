"""`EmbeddingIndex`: a searchable gallery of embeddings, built from a model or from vectors."""

import numpy as np

from keras_dml.pairs.distances import l2_normalize
from keras_dml.search.backends import APPROXIMATE, BACKENDS, make_backend
from keras_dml.search.gallery import resolve_gallery
from keras_dml.search.index_folder import read_index, save_index
from keras_dml.search.index_matching import IndexMatching
from keras_dml.search.index_search import IndexSearch
from keras_dml.serving.embedder import Embedder
from keras_dml.zoo.loading import resolve_model

__all__ = ["BACKENDS", "EmbeddingIndex", "make_backend"]


class EmbeddingIndex(IndexSearch, IndexMatching):
    """A gallery of embeddings with labels and ids, searched by inner product.

    Backends: `"exact"` (NumPy), `"flat"` (faiss, exact), `"ivf"` and `"hnsw"` (faiss,
    approximate); docs/search.md lists their options.

    Args:
        dim: int. Embedding size. Defaults to `None` (set by the first `add`).
        backend: `"exact"`, `"flat"`, `"ivf"` or `"hnsw"`. Defaults to `"exact"`.
        model: a `keras.Model`, `.onnx` file, SavedModel folder, `.keras` file or zoo name that
            embeds images. Defaults to `None` (embeddings only).
        normalize: bool. L2-normalise gallery and query vectors. Defaults to `False`.
        learner_slices: list of `(start, stop)` or None. Defaults to `None` (the model's).
        **backend_options: the backend's options (`chunk_size`, `nprobe`, ...).

    Examples:
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(100, 8))
    >>> index = EmbeddingIndex.from_embeddings(x, labels=np.arange(100), normalize=True)
    >>> result = index.search(index.embeddings[:2], k=3)
    >>> result.indices[:, 0].tolist(), result.labels[:, 0].tolist()
    ([0, 1], [0, 1])

    References:
        Johnson, Douze and Jégou, "Billion-scale similarity search with GPUs", 2019 (faiss).
    """

    def __init__(
        self,
        dim=None,
        backend="exact",
        model=None,
        normalize=False,
        learner_slices=None,
        **backend_options,
    ):
        if backend not in BACKENDS:
            make_backend(backend, 1, {})
        self.backend_name = backend
        self.backend_options = dict(backend_options)
        self.embedder = None
        if model is not None:
            self.embedder = model if isinstance(model, Embedder) else Embedder(resolve_model(model))
            learner_slices = learner_slices or self.embedder.learner_slices
        self.normalize = bool(normalize)
        self.learner_slices = (
            None if learner_slices is None else [tuple(map(int, s)) for s in learner_slices]
        )
        self.dim = None if dim is None else int(dim)
        self.labels = None
        self.ids = None
        self.class_names = None
        self.calibration = None
        self._parts = []
        self._embeddings = None
        self._backend = None
        self._built = False
        if backend != "exact":  # fail now, not at the first search, when faiss is missing
            make_backend(backend, self.dim or 1, self.backend_options)

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_model(cls, model, gallery=None, labels=None, ids=None, **kwargs):
        """An index that embeds images with `model`; `gallery` (optional) is added at once."""
        index = cls(model=model, **kwargs)
        if gallery is not None:
            index.add(gallery, labels=labels, ids=ids)
        return index

    @classmethod
    def from_embeddings(cls, embeddings, labels=None, ids=None, **kwargs):
        """An index over given embeddings `[N, D]` (a memory map is searched in place)."""
        index = cls(**kwargs)
        index.add(embeddings, labels=labels, ids=ids)
        return index

    def index_like(self, embeddings):
        """A new index over `embeddings` `[N, D]` with this index's backend and options."""
        return EmbeddingIndex.from_embeddings(
            embeddings, backend=self.backend_name, **self.backend_options
        )

    def add(self, data, labels=None, ids=None, class_names=None, batch_size=64, strict_files=False):
        """Adds gallery items: embeddings `[N, D]`, images, an `ImageDataset` or a folder.

        Args:
            data: what `resolve_gallery` takes (a folder `root/<class>/<img>` gives labels and ids).
            labels: int array [N] or None. Overrides labels read from the data.
            ids: sequence [N] or None. File paths or your own ids.
            class_names: list of str naming the labels, or None.
            batch_size: int. Images per model call. Defaults to `64`.
            strict_files: bool. Raise on an unreadable file of a folder instead of skipping it.
                Defaults to `False`.

        Returns:
            `self`.
        """
        embeddings, found_labels, found_ids, found_names = resolve_gallery(
            data, self.embedder, batch_size, strict_files
        )
        labels = found_labels if labels is None else np.asarray(labels)
        ids = found_ids if ids is None else list(ids)
        class_names = class_names or found_names
        if embeddings.shape[0] == 0:
            raise ValueError("The gallery to add is empty; pass at least one item.")
        dim = int(embeddings.shape[1])
        if self.dim is not None and dim != self.dim:
            raise ValueError(
                f"Embedding size mismatch: this index holds {self.dim}-d vectors and the new "
                f"items are {dim}-d. Use the same model for gallery and queries. Received: "
                f"shape {tuple(embeddings.shape)}"
            )
        for start in range(0, embeddings.shape[0], 65536):  # chunked: memory maps stay mapped
            finite = np.isfinite(embeddings[start : start + 65536]).all(axis=1)
            if not finite.all():
                row = start + int(np.argmin(finite))
                raise ValueError(
                    f"The gallery holds NaN or Inf values (from row {row}); check the model output."
                )
        for name, values in (("labels", labels), ("ids", ids)):
            if values is not None and len(values) != embeddings.shape[0]:
                raise ValueError(
                    f"`{name}` must have one entry per gallery item ({embeddings.shape[0]}). "
                    f"Received: {len(values)} {name}"
                )
        count = len(self)
        if count and (labels is None) != (self.labels is None):
            raise ValueError("Give labels for every gallery batch or for none.")
        if count and (ids is None) != (self.ids is None):
            raise ValueError("Give ids for every gallery batch or for none.")
        self.dim = dim
        if self.normalize:
            embeddings = l2_normalize(embeddings)
        elif not isinstance(embeddings, np.memmap):
            embeddings = np.asarray(embeddings, dtype=np.float32)
        self._parts.append(embeddings)
        self._embeddings = None
        if labels is not None:
            labels = np.asarray(labels).astype(np.int64)
            self.labels = labels if self.labels is None else np.concatenate([self.labels, labels])
        if ids is not None:
            self.ids = list(ids) if self.ids is None else self.ids + list(ids)
        if class_names is not None:
            self.class_names = [str(c) for c in class_names]
        self._built = False
        return self

    # -- properties -----------------------------------------------------------------------------
    @property
    def embeddings(self):
        """The gallery embeddings `[N, D]` (float32; a memory map when one was added alone)."""
        if self._embeddings is None:
            if not self._parts:
                raise ValueError("The index is empty; add a gallery first with `index.add(...)`.")
            parts = self._parts
            self._embeddings = parts[0] if len(parts) == 1 else np.concatenate(parts)
            self._parts = [self._embeddings]
        return self._embeddings

    def __len__(self):
        return int(sum(part.shape[0] for part in self._parts))

    @property
    def backend(self):
        """The built backend (built on first use after the gallery changed)."""
        if not self._built:
            self._backend = make_backend(self.backend_name, self.dim, self.backend_options)
            self._backend.build(self.embeddings)
            self._built = True
        return self._backend

    @property
    def exact(self):
        """Whether searches are exact (`"exact"` and `"flat"`)."""
        return self.backend_name not in APPROXIMATE

    # -- storage --------------------------------------------------------------------------------
    def save(self, folder):
        """Writes the index to `folder` (format: `keras_dml.search.index_folder`); returns it."""
        return save_index(self, folder)

    @classmethod
    def load(cls, folder, model=None, verify=True, mmap=True):
        """Loads a saved index, checking its files; `model` re-attaches an embedder."""
        return read_index(cls, folder, model=model, verify=verify, mmap=mmap)
