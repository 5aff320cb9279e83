"""`keras-dml search MODEL --gallery DIR --query IMAGE -k 5`: neighbours of an image."""

import os

from keras_dml.search.gallery import list_image_folder, readable_files
from keras_dml.search.index import EmbeddingIndex
from keras_dml.search.plot import plot_neighbors
from keras_dml.stores.index import StoreIndex
from keras_dml_cli.run.rerank import rerank_from_args

__all__ = ["run_search"]


def _query_paths(queries, index, strict_files=False):
    paths = []
    embedder = getattr(index, "embedder", None)
    image_size = None if embedder is None else embedder.image_size
    for query in queries:
        if os.path.isdir(query):
            found = list_image_folder(query)[0]
            paths.extend(readable_files(found, image_size, f"folder {query!r}", strict_files))
        elif os.path.isfile(query):
            paths.append(query)
        else:
            raise FileNotFoundError(f"Query image not found. Received: --query {query!r}")
    return paths


def run_search(args):
    """Runs `keras-dml search`; prints rank, score, class and path of each neighbour."""
    rerank = rerank_from_args(args)
    if args.store:
        if args.save_index:
            raise ValueError("--save-index saves a --gallery index; a --store keeps its own rows.")
        index = StoreIndex(args.store, model=args.model, collection=args.collection)
    elif args.load_index:
        index = EmbeddingIndex.load(args.load_index, model=args.model)
    else:
        index = EmbeddingIndex(backend=args.index, model=args.model)
        index.add(args.gallery, batch_size=args.batch_size, strict_files=args.strict_files)
    if args.save_index:
        index.save(args.save_index)
        print(f"saved the index ({len(index)} images) to {args.save_index}")
    queries = _query_paths(args.query, index, args.strict_files)
    result = index.search(
        queries, k=args.k, learner=args.learner, batch_size=args.batch_size, rerank=rerank
    )
    names = result.label_names()
    for q, path in enumerate(queries):
        print(f"query {path}")
        for rank in range(result.indices.shape[1]):
            item = result.ids[q, rank] if result.ids is not None else result.indices[q, rank]
            label = names[q][rank] if names is not None else "-"
            print(f"  {rank + 1}\t{result.scores[q, rank]:.4f}\t{label}\t{item}")
    if args.plot:
        _plot(args.plot, queries, result, names)
        print(f"saved the picture to {args.plot}")
    return 0


def _plot(path, queries, result, names):
    if result.ids is None:
        raise ValueError("--plot needs gallery image files (build the index from --gallery DIR).")
    stem, suffix = os.path.splitext(path)
    for q, query in enumerate(queries):
        titles = [
            f"{names[q][r] if names else ''} {result.scores[q, r]:.3f}".strip()
            for r in range(result.indices.shape[1])
        ]
        figure = plot_neighbors(query, list(result.ids[q]), titles=titles)
        figure.savefig(path if len(queries) == 1 else f"{stem}_{q}{suffix}", dpi=100)
