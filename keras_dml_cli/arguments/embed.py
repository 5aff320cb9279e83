"""`keras-dml embed`'s arguments (the run: `keras_dml_cli.run.embed`)."""

import argparse

# The options after MODEL: flag -> `add_argument` keywords.
OPTIONS = {
    "--images": {
        "required": True,
        "help": "folder of images (one sub-folder per class gives labels) or a glob pattern",
    },
    "--store": {
        "metavar": "URI",
        "help": "vector store: path/file.db (Milvus Lite) or http://host:19530",
    },
    "--output": {"metavar": "DIR", "help": "write Parquet shards to DIR"},
    "--collection": {
        "default": "embeddings",
        "help": "the store's collection (default embeddings)",
    },
    "--index": {
        "default": "flat",
        "choices": ["flat", "hnsw", "ivf"],
        "help": "index of a new collection (default flat: exact search)",
    },
    "--runner": {"default": "DirectRunner", "help": "Beam runner (default DirectRunner)"},
    "--batch-size": {"type": int, "default": 64, "help": "images per model call"},
    "--strict-files": {
        "action": "store_true",
        "help": "fail the run when a file cannot be read (default: skip it and name it)",
    },
    "--onnx": {
        "metavar": "FILE",
        "help": "export the .keras model to this ONNX file first: workers then need no TensorFlow",
    },
    "--beam-options": {
        "nargs": argparse.REMAINDER,
        "default": [],
        "metavar": "OPTION",
        "help": "the rest of the line goes to Beam as pipeline options (--project=..., ...)",
    },
}


def add_embed_parser(subparsers):
    """Adds the `embed` sub-command to the `keras-dml` parser."""
    parser = subparsers.add_parser(
        "embed", help="embed image files on Apache Beam into a vector store or Parquet shards"
    )
    parser.add_argument(
        "model", help="a .keras file, zoo name or preset, a SavedModel folder or a .onnx file"
    )
    for flag, keywords in OPTIONS.items():
        parser.add_argument(flag, **keywords)
    return parser


def check_embed_args(args):
    """Refuses an embed with nowhere to write, before Keras loads."""
    if args.store is None and args.output is None:
        raise ValueError("keras-dml embed needs --store URI, --output DIR, or both.")
