"""`EmbeddingIndex`: a searchable gallery of embeddings, built from a model or from vectors."""

import numpy as np

from keras_dml.search.calibration import select_threshold
from keras_dml.search.exact_topk import drop_self, exact_search
from keras_dml.search.gallery import resolve_gallery
from keras_dml.search.results import SearchResult, gather

BACKENDS = ("exact", "flat", "ivf", "hnsw")
APPROXIMATE = ("ivf", "hnsw")


def l2_normalize(x):
    """Row-wise L2 normalisation in float32."""
    x = np.asarray(x, dtype=np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def make_backend(backend, dim, options):
    """The search backend object for a backend name (`exact`, `flat`, `ivf` or `hnsw`)."""
    if backend not in BACKENDS:
        raise ValueError(
            f"`backend` must be one of {BACKENDS} (exact NumPy; faiss IndexFlatIP; faiss IVF; "
            f"faiss HNSW). Received: backend={backend!r}"
        )
    if backend == "exact":
        from keras_dml.search.numpy_backend import NumpyBackend

        return NumpyBackend(dim, **options)
    from keras_dml.search.faiss_backend import FaissBackend

    return FaissBackend(backend, dim, **options)


class EmbeddingIndex:
    """A gallery of embeddings with labels and ids, searched by inner product.

    The gallery's embeddings are always kept (a memory map works); the backend searches them:
    `"exact"` (NumPy, chunked, bounded memory, no dependency), `"flat"` (faiss `IndexFlatIP`,
    exact; on the GPU when faiss-gpu sees one), `"ivf"` and `"hnsw"` (faiss, approximate: check
    them with `measure_recall`). faiss is optional: `pip install "keras-dml[faiss]"`.

    keras-dml models return per-learner L2-normalised embeddings, so the inner product is the
    (ensemble) cosine similarity and `search(..., learner=j)` searches learner j's slice alone.

    Args:
        dim: int. Embedding size (set by the first `add` when None). Defaults to `None`.
        backend: `"exact"`, `"flat"`, `"ivf"` or `"hnsw"`. Defaults to `"exact"`.
        model: a `keras.Model`, a `.onnx` file, a SavedModel folder or a `.keras` file / zoo
            name, used to embed images (see `Embedder`). Defaults to `None` (embeddings only).
        normalize: bool. L2-normalise gallery and query vectors (for raw, unnormalised
            embeddings). Defaults to `False` (keras-dml models are already normalised).
        learner_slices: list of `(start, stop)` or None. Taken from the model when it has them.
        **backend_options: passed to the backend (`chunk_size`, `tile_size` for exact;
            `nlist`, `nprobe`, `hnsw_m`, `ef_search`, `ef_construction`, `use_gpu`,
            `train_size` for faiss).

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
            from keras_dml.search.embedder import Embedder

            self.embedder = model if isinstance(model, Embedder) else Embedder(model)
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

    def add(self, data, labels=None, ids=None, class_names=None, batch_size=64):
        """Adds gallery items: embeddings `[N, D]`, images, an `ImageDataset` or a folder.

        Args:
            data: see `keras_dml.search.gallery.resolve_gallery`. A folder `root/<class>/<img>`
                gives labels (class folder names) and ids (file paths) by itself.
            labels: int array [N] or None. Overrides labels read from the data.
            ids: sequence [N] or None (file paths or your own ids, stored as JSON).
            class_names: list of str naming the labels, or None.
            batch_size: int. Images per model call. Defaults to `64`.

        Returns:
            `self`.
        """
        embeddings, found_labels, found_ids, found_names = resolve_gallery(
            data, self.embedder, batch_size
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

    @property
    def threshold(self):
        """The calibrated match threshold (similarity), or None before `calibrate`."""
        return None if self.calibration is None else self.calibration["threshold"]

    # -- search ---------------------------------------------------------------------------------
    def embed(self, queries, batch_size=64):
        """Query vectors `[Q, D]` from embeddings, images, image files or a dataset."""
        embeddings = resolve_gallery(queries, self.embedder, batch_size)[0]
        if embeddings.ndim != 2 or (self.dim is not None and embeddings.shape[1] != self.dim):
            raise ValueError(
                f"Query embeddings must be [Q, {self.dim}] like the gallery. Received shape "
                f"{tuple(embeddings.shape)}; embed queries with the gallery's model."
            )
        return l2_normalize(embeddings) if self.normalize else embeddings.astype(np.float32)

    def _check_k(self, k, exclude_self=False):
        count = len(self)
        if count == 0:
            raise ValueError("The index is empty; add a gallery first with `index.add(...)`.")
        available = count - (1 if exclude_self else 0)
        if not isinstance(k, (int, np.integer)) or not 1 <= k <= available:
            raise ValueError(
                f"`k` must be an integer in [1, {available}] (the gallery holds {count} items). "
                f"Lower k or add more items. Received: k={k!r}"
            )

    def _learner_slice(self, learner):
        if not self.learner_slices:
            raise ValueError(
                "This index has no learner slices; build it from a keras-dml model or pass "
                f"`learner_slices=[(start, stop), ...]`. Received: learner={learner!r}"
            )
        if not isinstance(learner, (int, np.integer)) or not 0 <= learner < len(
            self.learner_slices
        ):
            raise ValueError(
                f"`learner` must be in [0, {len(self.learner_slices)}) (one per learner). "
                f"Received: learner={learner!r}"
            )
        return slice(*self.learner_slices[learner])

    def search_embeddings(self, queries, k, learner=None, exclude_self=False, start=0):
        """Top-k `(indices, scores)` of query vectors `[c, D]` (no embedding, no metadata).

        With `exclude_self`, the queries are gallery rows `start..start+c` and each is removed
        from its own neighbours by index (a duplicate of it still counts).
        """
        if learner is not None:
            columns = self._learner_slice(learner)
            references = self.embeddings[:, columns]
            if exclude_self:
                indices, sims = exact_search(queries[:, columns], references, k + 1)
                return drop_self(indices, sims, np.arange(start, start + len(queries)))
            return exact_search(queries[:, columns], references, k)
        return self.backend.search(queries, k, exclude_self=exclude_self, start=start)

    def iter_search(self, queries, k, exclude_self=False, chunk_size=None):
        """Yields `(start, indices, scores)` over chunks of query vectors (bounded memory)."""
        self._check_k(k, exclude_self)
        if chunk_size is None:
            chunk_size = self.backend.plan()[0] if self.backend_name == "exact" else 8192
        for start in range(0, queries.shape[0], chunk_size):
            chunk = queries[start : start + chunk_size]
            yield (start, *self.search_embeddings(chunk, k, exclude_self=exclude_self, start=start))

    def search(self, queries, k=5, learner=None, batch_size=64):
        """Nearest gallery items of each query.

        Args:
            queries: embeddings `[Q, D]`, images `[Q, H, W, C]`, image file(s), a folder or an
                `ImageDataset` (images need the index's model).
            k: int in [1, len(index)]. Defaults to `5`.
            learner: int or None. Search learner `learner`'s embedding slice only (exact).
                Defaults to `None` (the whole embedding).
            batch_size: int. Images per model call. Defaults to `64`.

        Returns:
            `SearchResult` with `indices`, `scores`, `labels`, `ids` (each `[Q, k]`).
        """
        self._check_k(k)
        vectors = self.embed(queries, batch_size)
        indices, scores = self.search_embeddings(vectors, int(k), learner=learner)
        return self._result(indices, scores)

    def _result(self, indices, scores, matched=None):
        ids = None if self.ids is None else np.asarray(self.ids, dtype=object)
        return SearchResult(
            indices=indices,
            scores=scores,
            labels=gather(self.labels, indices),
            ids=gather(ids, indices),
            class_names=self.class_names,
            matched=matched,
        )

    def measure_recall(self, sample=1000, k=10, seed=0):
        """Recall@k of this index's neighbours against the exact ones on a sample of the gallery.

        Each sampled gallery item queries the index (itself excluded); recall is the fraction of
        its exact top-k found in the returned top-k, averaged. 1.0 for the exact backends.

        Args:
            sample: int. Gallery items used as queries (seeded). Defaults to `1000`.
            k: int. Neighbours compared. Defaults to `10`.
            seed: int. Sample seed. Defaults to `0`.

        Returns:
            float in [0, 1].
        """
        self._check_k(k, exclude_self=True)
        rng = np.random.default_rng(seed)
        rows = np.sort(rng.choice(len(self), min(int(sample), len(self)), replace=False))
        queries = np.asarray(self.embeddings[rows], dtype=np.float32)
        approx = self.backend.search(queries, k + 1)[0]
        exact = exact_search(queries, self.embeddings, k + 1)[0]
        approx = drop_self(approx, np.zeros(approx.shape, np.float32), rows)[0]
        exact = drop_self(exact, np.zeros(exact.shape, np.float32), rows)[0]
        found = [np.intersect1d(a[a >= 0], e).size for a, e in zip(approx, exact)]
        return float(np.sum(found) / exact.size)

    # -- matching -------------------------------------------------------------------------------
    def calibrate(self, queries=None, labels=None, pairs=None, target_precision=0.9):
        """Picks the match threshold reaching `target_precision` on labelled data.

        Either `pairs=(a, b, same)`: two inputs of P items each (embeddings or images) and a bool
        [P] saying which pairs match; or `queries` with their `labels`: each query's nearest
        gallery item forms a pair (match iff same label); or neither: every gallery item queries
        the rest of the (labelled) gallery.

        Args:
            queries: query inputs (as `search`) or None.
            labels: int array [Q] of the queries' labels.
            pairs: `(a, b, same)` or None.
            target_precision: float in (0, 1]. Defaults to `0.9`.

        Returns:
            dict (see `calibration.select_threshold`); also kept in `self.calibration`.
        """
        if pairs is not None:
            first, second, same = pairs
            scores = np.sum(self.embed(first) * self.embed(second), axis=1)
        else:
            if self.labels is None:
                raise ValueError(
                    "Calibrating on queries needs a labelled gallery; add labels or pass pairs."
                )
            if queries is None:
                self._check_k(1, exclude_self=True)
                scores, neighbours = [], []
                for _, idx, sims in self.iter_search(self.embeddings, 1, exclude_self=True):
                    neighbours.append(idx[:, 0])
                    scores.append(sims[:, 0])
                scores, neighbours = np.concatenate(scores), np.concatenate(neighbours)
                labels = self.labels
            else:
                if labels is None:
                    raise ValueError("Pass the queries' `labels` (or `pairs`) to calibrate.")
                result = self.search(queries, k=1)
                scores, neighbours = result.scores[:, 0], result.indices[:, 0]
            same = self.labels[neighbours] == np.asarray(labels)
        self.calibration = select_threshold(scores, same, target_precision)
        return self.calibration

    def _require_threshold(self):
        if self.calibration is None:
            raise ValueError("No match threshold yet: call `index.calibrate(...)` first.")
        return self.calibration["threshold"]

    def is_match(self, first, second):
        """bool `[P]`: whether each pair scores at least the calibrated threshold."""
        threshold = self._require_threshold()
        return np.sum(self.embed(first) * self.embed(second), axis=1) >= threshold

    def match(self, queries, k=1):
        """`search` plus `matched` [Q]: the best neighbour reaches the calibrated threshold."""
        threshold = self._require_threshold()
        result = self.search(queries, k=k)
        result.matched = result.scores[:, 0] >= threshold
        return result

    # -- storage --------------------------------------------------------------------------------
    def save(self, folder):
        """Writes the index to `folder` (see `keras_dml.search.storage`). Returns the folder."""
        from keras_dml.search.storage import save_index

        return save_index(self, folder)

    @classmethod
    def load(cls, folder, model=None, verify=True, mmap=True):
        """Loads a saved index, checking its files; `model` re-attaches an embedder."""
        from keras_dml.search.storage import load_index

        return load_index(folder, model=model, verify=verify, mmap=mmap)
