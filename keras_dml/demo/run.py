"""`keras-dml demo`: every method trained briefly on the bundled digits, compared, exported."""

import json
import os
import time
import warnings

import keras

from keras_dml.demo.folder import check_demo_folder, clear_demo_folder
from keras_dml.demo.progress import DemoProgress
from keras_dml.export.onnx_model import export_onnx
from keras_dml.export.saved_model import export_saved_model
from keras_dml.methods import get_method, list_methods
from keras_dml.training import RunConfig, load_splits, train
from keras_dml.utils import is_available

# Short budgets for 2 CPU cores; each method's entries (its `MethodSpec.demo`) follow its paper's
# defaults scaled down to a 64-d embedding on 32 px images.
BASE_CONFIG = {
    "dataset": "digits",
    "image_size": 32,
    "backbone": {"name": "convnet"},
    "loss": {"name": "margin"},
    "optimizer": {"name": "adam", "learning_rate": 1e-3},
    "epochs": 8,
    "batch_size": 32,
    "m_per_class": 8,
    "seed": 0,
}


def demo_methods():
    """`{method: run-configuration entries}` of every method with demo entries, baseline first."""
    entries = {name: get_method(name).demo for name in list_methods()}
    names = sorted((n for n, demo in entries.items() if demo), key=lambda n: (n != "baseline", n))
    return {name: entries[name] for name in names}


def demo_run_config(method, epochs=None):
    """The demo's `RunConfig` of `method` (`epochs` overrides the demo's budget when given)."""
    demo = get_method(method).demo or {}  # an unknown name fails with the closest one
    config = {**BASE_CONFIG, "method": method, **demo}
    if epochs is not None:
        config["epochs"] = int(epochs)
    return RunConfig.from_dict(config)


def demo_config(method, epochs=None):
    """The demo's run configuration of `method` as a dict (`demo_run_config(...).to_dict()`)."""
    return demo_run_config(method, epochs).to_dict()


def run_demo(output_dir="demo_output", methods=None, epochs=None, verbose=True, overwrite=False):
    """Trains each method, prints a Recall@1 / MAP@R table and exports the best model.

    Args:
        output_dir: str. Folder for the runs, `results.json` and the exports.
        methods: list of str. Methods to run. Defaults to every method with a demo
            configuration.
        epochs: int. Overrides the epochs of every method.
        verbose: bool. Print progress and the table.
        overwrite: bool. Replace an earlier demo in `output_dir`. Defaults to `False`.

    Returns:
        list of dicts, one per method: `method`, `val_recall@1`, `val_map@r` (best epoch),
        `best_epoch`, test `recall@1`, `map@r`, `nmi`, `seconds`, `run_dir`, `report`.

    Raises:
        FileExistsError: `output_dir` holds files and `overwrite` is false, or is a file.
        ValueError: a method without a demo configuration.
    """
    available = list(demo_methods())
    methods = methods or available
    unknown = [m for m in methods if m not in available]
    if unknown:
        raise ValueError(
            f"The demo has no configuration for {unknown}. Available: {available} "
            f"(e.g. --methods {','.join(available[:2])})."
        )
    check_demo_folder(output_dir, overwrite)
    clear_demo_folder(output_dir, available)
    os.makedirs(output_dir, exist_ok=True)
    splits = load_splits(demo_config(methods[0]))
    results = []
    for index, method in enumerate(methods):
        config = demo_run_config(method, epochs)
        run_dir = os.path.join(output_dir, method)
        progress = DemoProgress(method, index, len(methods), config.epochs)
        if verbose:
            print(
                f"[demo] {index + 1} of {len(methods)}: training {method} for "
                f"{config.epochs} epochs ...",
                flush=True,
            )
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.showwarning = _print_warning
            run = train(
                config,
                run_dir,
                verbose=0,
                splits=splits,
                extra_callbacks=[progress] if verbose else (),
            )
        with open(os.path.join(run_dir, "best.keras.json")) as f:
            best_record = json.load(f)
        history = run["history"]
        results.append(
            {
                "method": method,
                "val_recall@1": history["val_recall@1"][best_record["epoch"]],
                "val_map@r": best_record["value"],
                "best_epoch": best_record["epoch"],
                "recall@1": run["metrics"]["recall@1"],
                "map@r": run["metrics"]["map@r"],
                "nmi": run["metrics"]["nmi"],
                "seconds": time.perf_counter() - start,
                "run_dir": run_dir,
                "report": run["report"],
            }
        )

    best = max(results, key=lambda r: (r["val_map@r"], r["val_recall@1"]))
    best_model = keras.saving.load_model(os.path.join(best["run_dir"], "best.keras"), compile=False)
    saved_model_dir = os.path.join(output_dir, "best_saved_model")
    onnx_path = os.path.join(output_dir, "best.onnx")
    exports = {"saved_model": export_saved_model(best_model, saved_model_dir)}
    if is_available("onnx") and is_available("tf2onnx"):
        exports["onnx"] = export_onnx(best_model, onnx_path)
    summary = {
        "selection": "best validation MAP@R (held-out training classes), per run and overall",
        "results": results,
        "best_method": best["method"],
        "exports": {k: v.path for k, v in exports.items()},
    }
    with open(os.path.join(output_dir, "results.json"), "w") as f:
        json.dump(summary, f, indent=2)
    if verbose:
        print(format_table(results))
        print(
            f"[demo] best on validation classes (val MAP@R): {best['method']}, epoch "
            f"{best['best_epoch'] + 1}; exported to "
            + ", ".join(report.path for report in exports.values())
        )
        pages = [r["report"] for r in results if r["report"]]
        if pages:
            print("[demo] one report per method (open in a browser): " + ", ".join(pages))
    return results


def _print_warning(message, category, filename, lineno, file=None, line=None):
    """Prints a warning as one `[demo] warning:` line, without the source path."""
    print(f"[demo] warning: {message}", flush=True)


def format_table(results):
    """A plain-text table of the demo's results (validation: best epoch; test: final model)."""
    lines = [
        f"{'method':<10} {'val MAP@R':>9} {'test R@1':>9} {'test MAP@R':>10} {'test NMI':>8} "
        f"{'time':>7}"
    ]
    for r in results:
        lines.append(
            f"{r['method']:<10} {r['val_map@r']:>9.3f} {r['recall@1']:>9.3f} "
            f"{r['map@r']:>10.3f} {r['nmi']:>8.3f} {r['seconds']:>6.0f}s"
        )
    return "\n".join(lines)
