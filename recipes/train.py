"""Train a keras-dml model from a JSON recipe with `model.fit`.

Checkpoints the best model on validation MAP@R (`best.keras`; the test split is never used for
model selection), writes TensorBoard logs, and resumes an interrupted run when the same command is
run again (`keras.callbacks.BackupAndRestore` in `OUTPUT/backup`). The test metrics of the final
model go to `OUTPUT/metrics.json`.

Usage:
    python recipes/train.py --config recipes/configs/baseline_digits.json --output runs/baseline
    python recipes/train.py --config recipes/configs/dc_cub200.json --output runs/dc_cub \
        --set data_dir=/data/CUB_200_2011 --set epochs=5

`--set KEY=VALUE` overrides a key (VALUE parsed as JSON when it parses, else a string); a dotted
KEY sets a nested one (`--set model.num_learners=2`).
"""

import argparse
import json
import sys


def build_parser():
    """The command line of this script (also read by the docs' command checks)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--config", required=True, help="JSON recipe in recipes/configs/")
    parser.add_argument("--output", required=True, help="run folder")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key")
    parser.add_argument("--quiet", action="store_true")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    from keras_dml.training import RunConfig, train
    from keras_dml.training.run_config import parse_overrides

    try:
        config = RunConfig.from_json(args.config, parse_overrides(args.set))
        result = train(config, args.output, verbose=0 if args.quiet else 2)
    except (ValueError, OSError, ImportError) as error:
        print(f"train.py: error: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    print(json.dumps(result["metrics"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
