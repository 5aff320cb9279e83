"""`keras-dml search MODEL --gallery DIR --query IMAGE -k 5`: neighbours of an image.

The top-level `keras-dml` command wires this in with `add_search_parser(subparsers)` and
`run_search(args)`.
"""

import os

from keras_dml.cli.rerank import add_rerank_arguments, rerank_from_args


def add_search_parser(subparsers):
    """Adds the `search` sub-command to the `keras-dml` parser."""
    parser = subparsers.add_parser(
        "search", help="nearest neighbours of query images in a gallery folder"
    )
    parser.add_argument(
        "model", help="a .keras file, zoo name or preset, a SavedModel folder or a .onnx file"
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--gallery", help="folder of images (one sub-folder per class gives labels)"
    )
    source.add_argument("--load-index", metavar="DIR", help="a saved index (from --save-index)")
    parser.add_argument(
        "--query", required=True, nargs="+", help="query image file(s) or a folder of images"
    )
    parser.add_argument("-k", type=int, default=5, help="neighbours per query (default 5)")
    parser.add_argument(
        "--index", default="exact", choices=["exact", "flat", "ivf", "hnsw"], help="backend"
    )
    parser.add_argument("--learner", type=int, help="search one learner's embedding only")
    parser.add_argument("--save-index", metavar="DIR", help="save the gallery index to DIR")
    parser.add_argument("--plot", metavar="PNG", help="draw each query and its neighbours")
    parser.add_argument("--batch-size", type=int, default=64, help="images per model call")
    add_rerank_arguments(parser)
    return parser


def _query_paths(queries):
    from keras_dml.search.gallery import list_image_folder

    paths = []
    for query in queries:
        if os.path.isdir(query):
            paths.extend(list_image_folder(query)[0])
        elif os.path.isfile(query):
            paths.append(query)
        else:
            raise FileNotFoundError(f"Query image not found. Received: --query {query!r}")
    return paths


def run_search(args):
    """Runs `keras-dml search`; prints rank, score, class and path of each neighbour."""
    from keras_dml.search import EmbeddingIndex

    rerank = rerank_from_args(args)
    if args.load_index:
        index = EmbeddingIndex.load(args.load_index, model=args.model)
    else:
        index = EmbeddingIndex(backend=args.index, model=args.model)
        index.add(args.gallery, batch_size=args.batch_size)
    if args.save_index:
        index.save(args.save_index)
        print(f"saved the index ({len(index)} images) to {args.save_index}")
    queries = _query_paths(args.query)
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
    from keras_dml.search.plot import plot_neighbors

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
