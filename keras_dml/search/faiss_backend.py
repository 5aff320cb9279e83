"""faiss backends (optional): exact `IndexFlatIP`, approximate IVF and HNSW, GPU when seen.

References:
    Johnson, Douze and Jégou, "Billion-scale similarity search with GPUs", IEEE TBD 2019 (faiss,
    IVF); Malkov and Yashunin, "Efficient and robust approximate nearest neighbor search using
    Hierarchical Navigable Small World graphs", TPAMI 2020 (HNSW).
"""

import math

import numpy as np

from keras_dml.search.errors import IndexFormatError
from keras_dml.search.exact_topk import drop_self, sort_rows
from keras_dml.utils import optional_import

KINDS = ("flat", "ivf", "hnsw")
_CHUNK = 8192


def import_faiss(kind):
    """Imports faiss or raises an error naming `pip install "keras-dml[faiss]"`."""
    return optional_import("faiss", feature=f"the {kind!r} search index")


def gpu_available(faiss):
    """Whether this faiss build has GPU support and sees at least one GPU."""
    return hasattr(faiss, "StandardGpuResources") and getattr(faiss, "get_num_gpus", int)() > 0


def default_nlist(num_vectors):
    """IVF lists: about 4 sqrt(N) (faiss' guideline), at least 1 and at most N / 39."""
    return int(max(1, min(4 * math.sqrt(num_vectors), num_vectors // 39)))


class FaissBackend:
    """One faiss index over the gallery, built on demand; options in docs/search.md.

    Args:
        kind: `"flat"` (exact), `"ivf"` or `"hnsw"` (approximate).
        dim: int. Embedding size.
        nlist: int or None. IVF lists. Defaults to `None` (`default_nlist(N)`).
        nprobe: int. IVF lists visited per query. Defaults to `16`.
        hnsw_m: int. HNSW neighbours per node. Defaults to `32`.
        ef_search: int. HNSW search depth. Defaults to `128`.
        ef_construction: int. HNSW build depth. Defaults to `80`.
        use_gpu: `"auto"`, True or False. Defaults to `"auto"`.
        train_size: int. IVF training sample (seeded). Defaults to `100_000`.
    """

    def __init__(
        self,
        kind,
        dim,
        nlist=None,
        nprobe=16,
        hnsw_m=32,
        ef_search=128,
        ef_construction=80,
        use_gpu="auto",
        train_size=100_000,
    ):
        if kind not in KINDS:
            raise ValueError(f"`kind` must be one of {KINDS}. Received: kind={kind!r}")
        self.faiss = import_faiss(kind)
        if use_gpu is True and not gpu_available(self.faiss):
            raise ValueError(
                "use_gpu=True needs faiss-gpu and a visible GPU; none found. Install "
                '`pip install "keras-dml[gpu]"` or pass use_gpu="auto". Received: use_gpu=True'
            )
        self.kind, self.dim = kind, int(dim)
        self.nlist, self.nprobe = nlist, int(nprobe)
        self.hnsw_m, self.ef_search, self.ef_construction = (
            int(hnsw_m),
            int(ef_search),
            int(ef_construction),
        )
        self.use_gpu = use_gpu
        self.train_size = int(train_size)
        self.index = None

    @property
    def exact(self):
        return self.kind == "flat"

    @property
    def on_gpu(self):
        return self.kind != "hnsw" and self.use_gpu is not False and gpu_available(self.faiss)

    def config(self):
        return {
            "nlist": self.nlist,
            "nprobe": self.nprobe,
            "hnsw_m": self.hnsw_m,
            "ef_search": self.ef_search,
            "ef_construction": self.ef_construction,
        }

    def _new_index(self, num_vectors):
        faiss = self.faiss
        ip = faiss.METRIC_INNER_PRODUCT
        if self.kind == "flat":
            return faiss.IndexFlatIP(self.dim)
        if self.kind == "hnsw":
            index = faiss.IndexHNSWFlat(self.dim, self.hnsw_m, ip)
            index.hnsw.efConstruction = self.ef_construction
            return index
        self.nlist = int(self.nlist or default_nlist(num_vectors))
        if self.nlist > num_vectors:
            raise ValueError(
                f"An IVF index needs at least `nlist` vectors to train ({self.nlist}); the gallery "
                f"has {num_vectors}. Pass a smaller nlist or use index='flat'. "
                f"Received: nlist={self.nlist}"
            )
        return faiss.IndexIVFFlat(faiss.IndexFlatIP(self.dim), self.dim, self.nlist, ip)

    def _to_device(self, index):
        if self.on_gpu:
            self._resources = self.faiss.StandardGpuResources()
            return self.faiss.index_cpu_to_gpu(self._resources, 0, index)
        return index

    def build(self, embeddings, seed=0):
        """(Re)builds the index over `embeddings` [N, D] (trained IVF on a seeded sample)."""
        index = self._new_index(embeddings.shape[0])
        if self.kind == "ivf":
            rng = np.random.default_rng(seed)
            count = min(embeddings.shape[0], max(self.train_size, 39 * self.nlist))
            rows = np.sort(rng.choice(embeddings.shape[0], count, replace=False))
            index = self._to_device(index)
            index.train(np.ascontiguousarray(embeddings[rows], dtype=np.float32))
        else:
            index = self._to_device(index)
        for start in range(0, embeddings.shape[0], 65536):
            index.add(np.ascontiguousarray(embeddings[start : start + 65536], dtype=np.float32))
        self.index = index
        self._apply_search_params()

    def _apply_search_params(self):
        if self.kind == "ivf":
            self.index.nprobe = min(self.nprobe, self.nlist)
        elif self.kind == "hnsw":
            self.index.hnsw.efSearch = self.ef_search

    def search(self, queries, k, exclude_self=False, start=0):
        """Top-k `(indices, sims)` [c, k] of a chunk of queries (global ids `start..`)."""
        out_indices, out_sims = [], []
        for offset in range(0, queries.shape[0], _CHUNK):
            chunk = np.ascontiguousarray(queries[offset : offset + _CHUNK], dtype=np.float32)
            sims, indices = self.index.search(chunk, k + 1 if exclude_self else k)
            indices = indices.astype(np.int64)
            sims = np.where(indices < 0, -np.inf, sims).astype(np.float32)
            if exclude_self:
                ids = np.arange(start + offset, start + offset + chunk.shape[0])
                indices, sims = drop_self(indices, sims, ids)
            indices, sims = sort_rows(indices, sims)
            out_indices.append(indices)
            out_sims.append(sims)
        return np.concatenate(out_indices), np.concatenate(out_sims)

    def write(self, path):
        """Writes the index (moved to the CPU first) to the file `path`."""
        index = self.index
        if self.on_gpu:
            index = self.faiss.index_gpu_to_cpu(index)
        self.faiss.write_index(index, str(path))

    def read(self, path, num_vectors):
        """Reads an index file and checks it holds `num_vectors` vectors of this dimension."""
        try:
            index = self.faiss.read_index(str(path))
        except RuntimeError as error:
            raise IndexFormatError(
                f"Cannot read the faiss index {path}: {str(error).splitlines()[0]}. Rebuild and "
                "save the index again."
            ) from error
        if index.d != self.dim or index.ntotal != num_vectors:
            raise IndexFormatError(
                f"The faiss index {path} holds {index.ntotal} x {index.d} vectors but the index "
                f"metadata says {num_vectors} x {self.dim}. Rebuild and save the index again."
            )
        if self.kind == "ivf":
            self.nlist = int(index.nlist)
        self.index = self._to_device(index)
        self._apply_search_params()
