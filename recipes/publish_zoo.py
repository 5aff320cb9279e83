"""Writes the zoo's model cards in `model_zoo/`: trained runs and the paper-scale recipes.

Two commands:

- `runs RUN_DIR [RUN_DIR ...] --prefix NAME_PREFIX`: each run folder of `keras_dml.training.train`
  (`model.keras`, `metrics.json`, `config.json`) becomes a published card whose file ships in
  `model_zoo/files/<name>/model.keras`. The model is re-saved without its optimizer state (a third
  of the size of a training checkpoint; the zoo serves inference), and the card records the test
  metrics with the command that re-measures them.
- `recipes`: every GPU recipe in `recipes/configs/` (ResNet-50 / GoogLeNet / BN-Inception on
  CUB, Cars, SOP, In-shop, VehicleID) that has no trained weights gets a `not published` card
  naming its recipe, never a link.

Usage:
    python recipes/publish_zoo.py runs runs/fmnist/* --prefix fashion_mnist --command \
        "python -m benchmarks.accuracy.recipes --dataset fashion_mnist --output runs/fmnist"
    python recipes/publish_zoo.py recipes
"""

import argparse
import glob
import json
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS_DIR = os.path.join(ROOT, "model_zoo")
PAPER_BACKBONES = ("resnet50", "googlenet", "bn_inception")


def method_title(method):
    """The long name of a registered method for card descriptions (its `MethodSpec.title`, else
    its registered description)."""
    from keras_dml.methods import get_method

    spec = get_method(method)
    return spec.title or spec.description


def _read(path):
    with open(path) as f:
        return json.load(f)


def publish_runs(run_dirs, prefix, command, output=MODELS_DIR, overwrite=True):
    """Publishes trained runs as cards with shipped files; returns the card paths.

    Args:
        run_dirs: run folders of `keras_dml.training.train`.
        prefix: str. Card names are `<prefix>_<method>_<backbone>`.
        command: str. The training command recorded in each card (`{run_dir}` is filled in).
        output: str. The cards folder. Defaults to the repository's `model_zoo/`.
        overwrite: bool. Replace existing cards and files. Defaults to `True`.
    """
    import keras

    from keras_dml.zoo import publish_run

    cards = []
    for run_dir in run_dirs:
        config = _read(os.path.join(run_dir, "config.json"))
        method, dataset = config["method"], config["dataset"]
        backbone = config["backbone"]["name"]
        name = f"{prefix}_{method}_{backbone}"
        model = keras.saving.load_model(
            os.path.join(run_dir, "model.keras"), compile=False, safe_mode=True
        )
        with tempfile.TemporaryDirectory() as scratch:
            # Copy the run's records next to the optimizer-free model and publish from there.
            shutil.copyfile(
                os.path.join(run_dir, "metrics.json"), os.path.join(scratch, "metrics.json")
            )
            with open(os.path.join(scratch, "config.json"), "w") as f:
                json.dump({**config, "command": command.format(run_dir=run_dir)}, f)
            model.save(os.path.join(scratch, "model.keras"))
            recipe = f"recipes/configs/{method}_{dataset}.json"
            card = publish_run(
                scratch,
                output,
                name=name,
                method=method,
                backbone=backbone,
                dataset=dataset,
                recipe=recipe if os.path.isfile(os.path.join(ROOT, recipe)) else None,
                metrics_command=(
                    f"keras-dml evaluate {name} --dataset {dataset} --split test --json"
                ),
                overwrite=overwrite,
            )
        cards.append(card)
        print(f"published {card}")
    return cards


def recipe_cards(output=MODELS_DIR):
    """Writes a `not published` card for every paper-scale recipe; returns the card paths."""
    from keras_dml.backbones.expected_source import ExpectedSource
    from keras_dml.zoo.publish import DEFAULT_PROTOCOLS
    from keras_dml.zoo.schema import validate_card

    written = []
    for path in sorted(glob.glob(os.path.join(ROOT, "recipes", "configs", "*.json"))):
        config = _read(path)
        backbone_block = isinstance(config["backbone"], dict)
        backbone = config["backbone"]["name"] if backbone_block else config["backbone"]
        if backbone not in PAPER_BACKBONES or config["dataset"] not in DEFAULT_PROTOCOLS:
            continue
        method, dataset = config["method"], config["dataset"]
        name = f"{method}_{backbone}_{dataset}"
        recipe = os.path.relpath(path, ROOT)
        size = config.get("image_size", 224)
        card = {
            "schema_version": 1,
            "name": name,
            "status": "not published",
            "description": (
                f"{method_title(method)} on {dataset} with {backbone}: the paper's "
                "settings as a recipe for a GPU. Not trained yet: train it with the command "
                "below and publish it with `keras-dml zoo publish`."
            ),
            "method": method,
            "backbone": backbone,
            "preprocessing": {"input_size": [size, size], "pixel_range": [0, 255], "channels": 3},
            "training": {
                "dataset": dataset,
                "protocol": DEFAULT_PROTOCOLS[dataset],
                "recipe": recipe,
                "command": f"python recipes/train.py --config {recipe} --output runs/{name}",
            },
            "license": "Apache-2.0",
        }
        weights = config["backbone"].get("weights") if backbone_block else None
        if isinstance(weights, dict):  # the ImageNet file the recipe converts, with its digest
            card["training"]["backbone_weights"] = ExpectedSource.from_entry(weights).describe()
        if config.get("paper"):
            card["references"] = [f"shared paper: {config['paper']}"]
        validate_card(card, source=name)
        target = os.path.join(output, f"{name}.json")
        with open(target, "w") as f:
            json.dump(card, f, indent=2)
            f.write("\n")
        written.append(target)
        print(f"wrote {target}")
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    runs = commands.add_parser("runs", help="publish trained run folders")
    runs.add_argument("run_dirs", nargs="+")
    runs.add_argument("--prefix", required=True, help="name prefix, e.g. the dataset")
    runs.add_argument(
        "--command",
        dest="training_command",
        required=True,
        help="the training command recorded in the cards ({run_dir} is filled in)",
    )
    runs.add_argument("--output", default=MODELS_DIR)
    recipes = commands.add_parser("recipes", help="cards for the untrained GPU recipes")
    recipes.add_argument("--output", default=MODELS_DIR)
    args = parser.parse_args(argv)
    if args.command == "runs":
        publish_runs(args.run_dirs, args.prefix, args.training_command, args.output)
    else:
        recipe_cards(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
