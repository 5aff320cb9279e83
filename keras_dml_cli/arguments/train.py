"""`keras-dml train`'s arguments and early checks, no Keras (run: `keras_dml_cli.run.train`)."""

import argparse

from keras_dml_cli.catalogue import catalogue, has_installed_plugins, method_descriptions
from keras_dml_cli.suggestions import unknown_name


def methods_epilog(plugins=()):
    """`keras-dml train --help`'s table of the trainable methods, `--plugin` modules' included."""
    rows = [f"  {name:<10} {text}" for name, text in method_descriptions(plugins).items()]
    return "methods (--method):\n" + "\n".join(rows)


def add_train_parser(subparsers, plugins=()):
    """Adds the `train` sub-command; `--plugin` modules (`plugins`) are imported for its help."""
    parser = subparsers.add_parser(
        "train",
        help="train a model with model.fit and evaluate it on the test split",
        description=(
            "Train with model.fit, keep the best model on validation MAP@R (best.keras), "
            "evaluate the final model on the test split. Settings not given are fitted to the "
            "data: batches of about 64 images from up to 16 classes, and for D&C / hierarchical "
            "D&C at most (training classes / 2) learners. Running the same command again "
            "resumes an interrupted run."
        ),
        epilog=methods_epilog(plugins),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", help="JSON run configuration (see recipes/configs/)")
    parser.add_argument("--method", help="training method (listed below), e.g. baseline, dc, bier")
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first; its @register_method methods become trainable (repeatable)",
    )
    parser.add_argument(
        "--dataset",
        help=f"dataset name: {', '.join(catalogue()['datasets'])} (image_folder and the official "
        "layouts read --data-dir)",
    )
    parser.add_argument("--data-dir", help="folder holding the dataset in its official layout")
    parser.add_argument(
        "--strict-files",
        action="store_true",
        help="stop at an unreadable image of a folder dataset (default: skip it with a warning)",
    )
    parser.add_argument(
        "--backbone",
        help=(
            "backbone name (default vgg_small; convnet is cheaper per step; resnet50, "
            "googlenet, bn_inception have ImageNet weights), or keras_hub:PRESET for a keras-hub "
            "backbone (preset folder, kaggle:// or hf:// handle; --weights imagenet loads the "
            "preset's weights)"
        ),
    )
    parser.add_argument(
        "--loss",
        metavar="NAME",
        help=f"loss name: {', '.join(catalogue()['losses'])} (default: the method's own; its "
        "arguments with --set loss.KEY=VALUE)",
    )
    parser.add_argument("--weights", help="backbone weights: 'imagenet' or a weights file")
    parser.add_argument(
        "--image-size",
        type=int,
        metavar="PIXELS",
        help="side of the square images the model is trained on (default: 32)",
    )
    parser.add_argument(
        "--augmentation",
        help="training augmentation: none, flip, crop, crop_flip, resized_crop, "
        "resized_crop_flip (default: the dataset's own, crop_flip for image files such as "
        "cub200 / cars196 / sop / inshop / vehicleid / tfds:* / image_folder, none for "
        "in-memory images such as digits / fashion_mnist / hangul)",
    )
    parser.add_argument("--embedding-dim", type=int, help="size of the (total) embedding")
    parser.add_argument(
        "--num-learners",
        type=int,
        help="learners of an ensemble method (K; hierarchical D&C: max_learners)",
    )
    parser.add_argument("--epochs", type=int, help="training epochs (default: 10)")
    parser.add_argument(
        "--batch-size", type=int, help="images per batch (default: fitted to the data, ~64)"
    )
    parser.add_argument(
        "--m-per-class",
        type=int,
        help="images per class in a batch (default: fitted to the data, >= 4)",
    )
    parser.add_argument("--learning-rate", type=float, help="optimizer learning rate")
    parser.add_argument("--seed", type=int, help="random seed (also of the validation split)")
    parser.add_argument(
        "--strategy",
        choices=("default", "mirrored", "multi_worker", "data_parallel"),
        help="distribution: default (one device), mirrored (every local GPU/CPU device), "
        "multi_worker (the workers of TF_CONFIG), data_parallel (JAX: local devices)",
    )
    parser.add_argument(
        "--precision",
        choices=("float32", "mixed_float16", "mixed_bfloat16"),
        help="Keras dtype policy of the model (default float32; mixed_* compute in 16 bits "
        "with float32 weights, losses and embeddings)",
    )
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override any configuration key, dotted for nested ones "
        "(--set model.num_learners=2 --set method_options.recluster_every=3)",
    )
    parser.add_argument("--output", required=True, help="run folder (model.keras, metrics.json...)")
    parser.add_argument("--quiet", action="store_true", help="no per-epoch progress")
    parser.add_argument(
        "--no-report", action="store_true", help="skip RUN_DIR/report.html (see `report`)"
    )


def check_names(args):
    """Refuses a misspelt `--method` or `--loss` before Keras loads, from the catalogue.

    With a `--plugin`, which may register other names, the registries decide after importing it.

    Raises:
        ValueError: an unknown method or loss name, with the closest known one.
    """
    if args.plugin or has_installed_plugins():
        return
    methods, losses = catalogue()["methods"], catalogue()["losses"]
    if args.method is not None and args.method not in methods:
        raise unknown_name("method", args.method, methods, "methods")
    if args.loss is not None and args.loss not in losses:
        raise unknown_name("loss", args.loss, losses, "losses")
