"""Train, evaluate and save one run from a configuration (used by the CLI, recipes and demo)."""

import json
import os
import shutil
import time

import keras

from keras_dml import backbones
from keras_dml.data.run_splits import QUERY_GALLERY_DATASETS as QUERY_GALLERY_DATASETS
from keras_dml.data.run_splits import load_splits
from keras_dml.evaluation import RetrievalEvaluation
from keras_dml.evaluation.model_evaluation import evaluate_model
from keras_dml.methods import get_method
from keras_dml.methods.defaults import compile_with_config, m_per_class_batches
from keras_dml.training.model_arguments import model_argument_error
from keras_dml.training.precision import precision_policy
from keras_dml.training.resolve import resolve_run
from keras_dml.training.resumable import BestCheckpoint, HistoryFile, warn_inexact_resume
from keras_dml.training.run_config import RunConfig
from keras_dml.training.strategy import (
    check_no_caller_scope,
    check_strategy,
    is_chief,
    make_strategy,
    strategy_scope,
    worker_output_dir,
)
from keras_dml.training.tensorboard_logs import tensorboard_callbacks
from keras_dml.visualization.report import report_after_training


def train(config, output_dir, verbose=1, extra_callbacks=(), splits=None, report=True):
    """Trains, evaluates and saves one run; called again on the same folder, it resumes.

    Args:
        config: `RunConfig`, or a dict `RunConfig.from_dict` takes.
        output_dir: str. The run folder.
        verbose: int. Keras verbosity. Defaults to `1`.
        extra_callbacks: sequence of Keras callbacks added to the method's own. Defaults to `()`.
        splits: dict or `None`. Splits already loaded by `load_splits`. Defaults to `None`.
        report: bool. Write `report.html` at the end. Defaults to `True`.

    Returns:
        dict with `model`, `history`, `metrics`, `seconds`, `report` (a path or `None`) and
        `output_dir` (the folder this process wrote).

    Examples:
    >>> result = train({"method": "baseline", "dataset": "digits", "epochs": 2}, "runs/x")
    >>> result["metrics"]["recall@1"]  # doctest: +SKIP
    """
    if not isinstance(config, RunConfig):
        config = RunConfig.from_dict(config)
    check_strategy(config.strategy)
    check_no_caller_scope(config.strategy)
    # A multi-worker strategy must exist before TensorFlow runs its first op (data loading).
    strategy = make_strategy(config.strategy)
    with worker_output_dir(output_dir, strategy) as run_dir:
        with precision_policy(config.precision), strategy_scope(strategy):
            result = _train(config, run_dir, verbose, extra_callbacks, splits)
        if report and is_chief(strategy):
            result["report"] = report_after_training(
                run_dir, result["model"], result.pop("splits"), verbose=bool(verbose)
            )
        result.pop("splits", None)
        result.setdefault("report", None)
        result["output_dir"] = run_dir
        return result


def _train(config, output_dir, verbose, extra_callbacks, splits):
    """`train` inside the run's strategy scope and dtype policy."""
    get_method(config.method).parse_options(config)  # unknown options fail before data loads
    splits = splits or load_splits(config)
    config = resolve_run(config, splits)  # every default and fitted value; frozen from here
    os.makedirs(output_dir, exist_ok=True)
    config.to_json(os.path.join(output_dir, "config.json"))
    keras.utils.set_random_seed(config.seed)
    backup_dir = os.path.join(output_dir, "backup")
    if not (os.path.isdir(backup_dir) and os.listdir(backup_dir)):
        _start_fresh(output_dir)
    else:
        warn_inexact_resume(config)
    model, train_dataset, method_callbacks = build_training(
        config, splits, state_dir=os.path.join(output_dir, "state")
    )
    config = config.to_dict()

    val_dataset = splits["val"].as_dataset(
        training=False, batch_size=config["batch_size"], image_size=config["image_size"]
    )
    history_file = HistoryFile(os.path.join(output_dir, "history.json"))
    # Backups at each epoch's end only: BackupAndRestore reruns a mid-epoch backup's epoch from
    # its first batch, and batches, crops and loss generators replay from (seed, epoch, step).
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
    # The whole training's time: a resumed run adds the epochs the interrupted run finished.
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


def build_training(config, splits, state_dir=None):
    """Builds, compiles and feeds the model of a resolved run configuration.

    Args:
        config: `RunConfig` resolved by `resolve_run`.
        splits: dict of loaded splits (`load_splits`).
        state_dir: str or `None`. State folder of a method that keeps one, unless
            `method_options.state_dir` is set. Defaults to `None`.

    Returns:
        `(model, train_data, callbacks)` for `model.fit(..., shuffle=False)`.

    Examples:
    >>> splits = keras_dml.training.load_splits({"method": "dc", "dataset": "digits"})
    >>> config = keras_dml.training.resolve_run({"method": "dc", "dataset": "digits"}, splits)
    >>> model, data, callbacks = build_training(config, splits)
    """
    method = get_method(config.method)
    values = config.to_dict()
    if method.uses_state_dir and not values["method_options"].get("state_dir"):
        values["method_options"]["state_dir"] = state_dir
    backbone_options = dict(values["backbone"])
    backbone = backbones.get(
        backbone_options.pop("name"),
        input_shape=(values["image_size"], values["image_size"], 3),
        **backbone_options,
    )
    model = _build(method, values, backbone, splits)
    (method.compile or compile_with_config)(values, model)
    train_data, callbacks = (method.prepare or m_per_class_batches)(values, model, splits)
    return model, train_data, callbacks
