"""`keras-dml evaluate`: retrieval metrics of a saved model on a dataset split."""

import json

from keras_dml import zoo
from keras_dml.data import load_dataset
from keras_dml.evaluation.model_evaluation import evaluate_model
from keras_dml_cli.run.rerank import rerank_from_args

__all__ = ["run_evaluate"]


def run_evaluate(args):
    """Runs `keras-dml evaluate`: loads the model and the split, prints the metrics.

    `--split query` (or `gallery`) searches the gallery split; another split searches itself.

    Raises:
        ValueError: the model cannot be loaded (with the zoo's message).
    """
    rerank = rerank_from_args(args)

    try:
        model = zoo.load(args.model)
    except zoo.ZooError as error:
        raise ValueError(str(error.args[0]) if error.args else str(error)) from error
    shape = getattr(model, "image_shape", None) or model.input_shape[1:]
    image_size = int(shape[0]) if shape[0] else None

    def load(split):
        return load_dataset(
            args.dataset, split=split, data_dir=args.data_dir, image_size=image_size, seed=args.seed
        )

    if args.split in ("query", "gallery"):
        splits = {"query": load("query"), "gallery": load("gallery")}
    else:
        splits = {"test": load(args.split)}
    metrics = evaluate_model(
        model, splits, batch_size=args.batch_size, image_size=image_size, rerank=rerank
    )
    metrics = {k: (v.item() if hasattr(v, "item") else v) for k, v in metrics.items()}
    if args.json:
        print(json.dumps(metrics))
    else:
        for key, value in metrics.items():
            print(f"{key:>16}: {value:.4f}" if isinstance(value, float) else f"{key:>16}: {value}")
    return 0
