"""`keras-dml search`'s arguments (the run: `keras_dml_cli.run.search`)."""

from keras_dml_cli.arguments.rerank import add_rerank_arguments


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
    source.add_argument(
        "--store",
        metavar="URI",
        help="a vector store made by keras-dml embed (path/file.db, http://...)",
    )
    parser.add_argument(
        "--query", required=True, nargs="+", help="query image file(s) or a folder of images"
    )
    parser.add_argument("-k", type=int, default=5, help="neighbours per query (default 5)")
    parser.add_argument(
        "--index", default="exact", choices=["exact", "flat", "ivf", "hnsw"], help="backend"
    )
    parser.add_argument("--learner", type=int, help="search one learner's embedding only")
    parser.add_argument(
        "--collection", default="embeddings", help="the --store collection (default embeddings)"
    )
    parser.add_argument("--save-index", metavar="DIR", help="save the gallery index to DIR")
    parser.add_argument("--plot", metavar="PNG", help="draw each query and its neighbours")
    parser.add_argument("--batch-size", type=int, default=64, help="images per model call")
    parser.add_argument(
        "--strict-files",
        action="store_true",
        help="stop at an unreadable image of a folder (default: skip it with a warning)",
    )
    add_rerank_arguments(parser)
    return parser
