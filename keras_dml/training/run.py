"""Train, evaluate and save one run from a configuration (used by the CLI, recipes and demo)."""

import dataclasses
import json
import os
import shutil
import time
import warnings

import keras

from keras_dml import backbones
from keras_dml.data.run_splits import QUERY_GALLERY_DATASETS as QUERY_GALLERY_DATASETS
from keras_dml.data.run_splits import load_splits
from keras_dml.evaluation import RetrievalEvaluation
from keras_dml.evaluation.model_evaluation import evaluate_model
from keras_dml.losses.class_weights import (
    with_class_arguments,
    with_recommended_lr_multipliers,
)
from keras_dml.methods import get_method
from keras_dml.methods.defaults import (
    check_loss_entry,
    compile_with_config,
    m_per_class_batches,
)
from keras_dml.training.fit_to_data import fit_to_data
from keras_dml.training.model_arguments import model_argument_error
from keras_dml.training.precision import precision_policy
from keras_dml.training.resumable import BestCheckpoint, HistoryFile, warn_inexact_resume
from keras_dml.training.run_config import RunConfig
from keras_dml.training.strategy import (
    check_strategy,
    is_chief,
    make_strategy,
    strategy_scope,
    worker_output_dir,
)
from keras_dml.training.tensorboard_logs import tensorboard_callbacks
from keras_dml.visualization.report import report_after_training


def train(config, output_dir, verbose=1, extra_callbacks=(), splits=None, report=True):
    """Trains the configured model with `model.fit`, evaluates it on the test protocol, saves it.

    Writes into `output_dir`: `config.json` (with the batch composition and learner count that
    were fitted to the data), `model.keras` (final weights), `best.keras` (best validation MAP@R
    on held-out training classes, `keras_dml.training.resumable.SELECTION_METRIC`; the test
    split is never used for model selection) with `best.keras.json` (its value and epoch),
    `history.json` (one entry per epoch, written as it ends), `metrics.json` (test metrics of
    the final model), `logs/` (TensorBoard, where TensorFlow is installed) and `backup/`
    (`keras.callbacks.BackupAndRestore`).
    Running the same command again resumes an interrupted run: weights, optimizer, epoch, method
    state, the best value and the history carry over, and the run ends with the weights and
    metrics of an uninterrupted run with the same seed (same batches, crops and random draws;
    `warn_inexact_resume` names the exception). At the end it writes `report.html`
    (`keras_dml.visualization.report`; a report that fails only warns).

    The model is built, compiled and fitted under the configuration's `strategy`
    (`keras_dml.training.strategy`: `default`, `mirrored`, `multi_worker` from `TF_CONFIG`, or
    `data_parallel` on JAX) and dtype `precision` (`keras_dml.training.precision`; the global
    policy is restored afterwards). Under `multi_worker` only the chief writes `output_dir`; the
    other workers write to a temporary folder that is removed at the end, and a resumed run
    starts every worker from the chief's checkpoint.

    Args:
        config: `RunConfig`, or a dict `RunConfig.from_dict` takes (a partial run
            configuration or a saved run's `config.json`).
        output_dir: str. Where the run's files go.
        verbose: int. Keras verbosity.
        extra_callbacks: sequence of Keras callbacks added to the method's own.
        splits: dict of already loaded splits (as `load_splits` returns), to skip loading.
        report: bool. Write `report.html` at the end. Defaults to `True`.

    Returns:
        dict with `model`, `history` (dict of lists), `metrics` (dict), `seconds`, `report`
        (the page's path, or `None`) and `output_dir` (the folder this process wrote: a removed
        temporary folder on a non-chief worker).

    Examples:
    >>> result = train({"method": "baseline", "dataset": "digits", "epochs": 2}, "runs/x")
    >>> result["metrics"]["recall@1"]  # doctest: +SKIP
    """
    if not isinstance(config, RunConfig):
        config = RunConfig.from_dict(config)  # the one resolution of the run's configuration
    config = config.to_dict()  # the mutable form the method hooks read, saved as config.json
    check_strategy(config["strategy"])
    # A multi-worker strategy must exist before TensorFlow runs its first op (data loading).
    strategy = make_strategy(config["strategy"])
    with worker_output_dir(output_dir, strategy) as run_dir:
        with precision_policy(config["precision"]), strategy_scope(strategy):
            result = _train(config, run_dir, verbose, extra_callbacks, splits)
        if report and is_chief(strategy):
            result["report"] = report_after_training(
                run_dir, result["model"], result.pop("splits"), verbose=bool(verbose)
            )
        result.pop("splits", None)
        result.setdefault("report", None)
        result["output_dir"] = run_dir
        return result


def warn_unreached_stages(options, epochs):
    """Warns for each stage option (`conquer_epoch`, `finetune_epoch`, ...) that `epochs` never
    reaches, since that stage would silently not run (epochs are counted from 0).

    Args:
        options: a method's parsed options dataclass.
        epochs: int. The run's number of epochs.
    """
    for field in dataclasses.fields(options):
        value = getattr(options, field.name)
        if field.name.endswith("_epoch") and isinstance(value, int) and value >= epochs:
            warnings.warn(
                f"method_options.{field.name}={value} is not below epochs={epochs}, so that "
                f"stage will not run (epochs count from 0); set it to at most {epochs - 1}, or "
                "to null to train without it.",
                stacklevel=2,
            )


def _train(config, output_dir, verbose, extra_callbacks, splits):
    """`train` inside the run's strategy scope and dtype policy."""
    method = get_method(config["method"])
    options = method.parse_options(config)  # unknown method_options fail before any data loads
    warn_unreached_stages(options, config["epochs"])
    if config["loss"] is not None:
        check_loss_entry(config["loss"])
    # A recipe's converted ImageNet weights are found and checked before any data loads.
    backbones.check_backbone_weights(config["backbone"])
    splits = splits or load_splits(config)
    fit_to_data(config, method, splits["train"].labels)
    # Class-based losses (proxies, class weights) need the number of training classes; filled in
    # here, where the training split is known, and kept in the saved config.json.
    config["loss"] = with_class_arguments(
        config["loss"] or method.default_loss, num_classes=splits["train"].num_classes
    )
    config["optimizer"] = with_recommended_lr_multipliers(config["optimizer"], config["loss"])
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    keras.utils.set_random_seed(config["seed"])
    if method.uses_state_dir and not config["method_options"].get("state_dir"):
        config["method_options"]["state_dir"] = os.path.join(output_dir, "state")
    backup_dir = os.path.join(output_dir, "backup")
    if not (os.path.isdir(backup_dir) and os.listdir(backup_dir)):
        _start_fresh(output_dir)
    else:
        warn_inexact_resume(config)

    backbone_options = dict(config["backbone"])
    backbone = backbones.get(
        backbone_options.pop("name"),
        input_shape=(config["image_size"], config["image_size"], 3),
        **backbone_options,
    )
    model = _build(method, config, backbone, splits)
    (method.compile or compile_with_config)(config, model)
    train_dataset, method_callbacks = (method.prepare or m_per_class_batches)(config, model, splits)

    val_dataset = splits["val"].as_dataset(
        training=False, batch_size=config["batch_size"], image_size=config["image_size"]
    )
    history_file = HistoryFile(os.path.join(output_dir, "history.json"))
    # The backup is written at every epoch's end, not every N steps: Keras' BackupAndRestore
    # restores a mid-epoch backup's weights but runs that epoch again from its first batch, so
    # only epoch backups resume exactly. The epoch's batches and crops derive from (seed,
    # epoch, step) (`keras_dml.data.samplers.epoch_seeds`) and the random generators of the
    # loss are saved with the weights (`keras_dml.models.random_state`): a resumed run repeats
    # the interrupted epoch as the uninterrupted run trained it.
    callbacks = [
        RetrievalEvaluation(val_dataset, every_n_epochs=config["eval_every"]),
        *method_callbacks,
        BestCheckpoint(os.path.join(output_dir, "best.keras")),
        keras.callbacks.BackupAndRestore(backup_dir),
        *tensorboard_callbacks(output_dir),
        history_file,
        *extra_callbacks,
    ]
    start = time.perf_counter()
    model.fit(
        train_dataset, epochs=config["epochs"], callbacks=callbacks, verbose=verbose, shuffle=False
    )
    # A resumed run's time also counts the epochs the interrupted run finished, so `seconds`
    # (and metrics.json's `train_seconds`) is the whole training's, not the last segment's.
    seconds = time.perf_counter() - start + history_file.earlier_seconds()

    model.save(os.path.join(output_dir, "model.keras"))
    metrics = evaluate_model(
        model, splits, batch_size=config["batch_size"], image_size=config["image_size"]
    )
    metrics = {key: _plain(value) for key, value in metrics.items()}
    history_dict = history_file.history()
    with open(os.path.join(output_dir, "metrics.json"), "w") as f:
        json.dump({"split": "test", "train_seconds": seconds, **metrics}, f, indent=2)
    return {
        "model": model,
        "history": history_dict,
        "metrics": metrics,
        "seconds": seconds,
        "splits": splits,
    }


def _start_fresh(output_dir):
    """Removes the records of an earlier, finished run in `output_dir` (not a resume)."""
    for name in ("history.json", "best.keras.json"):
        path = os.path.join(output_dir, name)
        if os.path.exists(path):
            os.remove(path)
    state = os.path.join(output_dir, "state")
    if os.path.isdir(state):
        shutil.rmtree(state)


def _build(method, config, backbone, splits):
    """`method.build`, with a misspelt `model` argument explained in one line."""
    try:
        return method.build(config, backbone, splits)
    except ValueError as error:
        explained = model_argument_error(error, config)
        if explained is None:
            raise
        raise explained from error
    except TypeError as error:
        if "argument" not in str(error):
            raise
        raise ValueError(
            f"Invalid `model` settings for method {config['method']!r}: {error}. Check the "
            f"spelling of the keys in the `model` entry. Received: model={config['model']}"
        ) from error


def _plain(value):
    """Converts numpy scalars to JSON-friendly Python numbers."""
    try:
        return value.item()
    except AttributeError:
        return value
