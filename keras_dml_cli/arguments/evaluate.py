"""`keras-dml evaluate`'s arguments (the run: `keras_dml_cli.run.evaluate`)."""

from keras_dml_cli.arguments.rerank import add_rerank_arguments


def add_evaluate_parser(subparsers):
    """Adds the `evaluate` sub-command to `keras-dml`'s sub-parsers."""
    parser = subparsers.add_parser("evaluate", help="retrieval metrics of a saved model")
    parser.add_argument("model", help="a .keras file, a zoo preset folder or a zoo model name")
    parser.add_argument("--dataset", required=True, help="dataset name, e.g. digits")
    parser.add_argument("--data-dir", help="folder holding the dataset in its official layout")
    parser.add_argument("--split", default="test", help="test (default), val, or query (In-shop)")
    parser.add_argument("--batch-size", type=int, default=64, help="embedding batch size")
    parser.add_argument("--seed", type=int, default=0, help="seed of the validation class split")
    parser.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    add_rerank_arguments(parser)
