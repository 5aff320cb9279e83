"""`keras-dml train`: the run configuration of its arguments, and the run itself."""

import json
import os

from keras_dml import training
from keras_dml.backbones.hub import parse_backbone
from keras_dml.methods import get_method
from keras_dml.training.run_config import merge_overrides, parse_overrides, read_config_file
from keras_dml_cli.arguments.train import (
    check_names,
)

__all__ = ["config_from_args", "run_train"]


def config_from_args(args):
    """The `RunConfig` of `keras-dml train`'s arguments: `--config` (or defaults), flags, `--set`.

    Raises:
        ValueError: `--num-learners` without `--method` or `--config`, or a bad override.
        FileNotFoundError: no file at `--config`.
    """
    base = read_config_file(args.config) if args.config else {}

    overrides = {}
    for key in (
        "method",
        "dataset",
        "data_dir",
        "image_size",
        "augmentation",
        "epochs",
        "batch_size",
        "m_per_class",
        "seed",
        "strategy",
        "precision",
    ):
        value = getattr(args, key)
        if value is not None:
            overrides[key] = value
    if args.backbone is not None:  # a name, or keras_hub:PRESET
        overrides["backbone"] = parse_backbone(args.backbone)
    nested = {
        ("backbone", "weights"): args.weights,
        ("loss", "name"): args.loss,
        ("model", "embedding_dim"): args.embedding_dim,
        ("optimizer", "learning_rate"): args.learning_rate,
    }
    for (entry, key), value in nested.items():
        if value is not None:
            overrides.setdefault(entry, {})[key] = value
    if args.strict_files:
        overrides.setdefault("dataset_options", {})["strict_files"] = True
    if args.num_learners is not None:
        if not (args.config or args.method):
            raise ValueError("--num-learners needs --method or --config.")
        method = args.method or base.get("method")
        option = get_method(method).learners_option
        overrides.setdefault("model", {})[option] = args.num_learners
    overrides = merge_overrides(overrides, parse_overrides(args.set))
    return training.RunConfig.from_dict(merge_overrides(base, overrides))


def run_train(args):
    """Runs `keras-dml train`: trains, prints the test metrics and where the model went."""
    check_names(args)
    config = config_from_args(args)
    result = training.train(
        config, args.output, verbose=0 if args.quiet else 2, report=not args.no_report
    )
    print(json.dumps(result["metrics"], indent=2))
    if result.get("output_dir", args.output) != args.output:  # a non-chief worker
        print(f"Not the chief worker: the chief saves {os.path.join(args.output, 'model.keras')}")
    else:
        print(f"Saved {os.path.join(args.output, 'model.keras')}")
    return 0
