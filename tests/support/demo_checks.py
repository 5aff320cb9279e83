"""What a finished `keras-dml demo` folder must hold: checked on the README walk's own demo
(`tests/docs/test_readme_walk.py`, every method) and in `tests/cli/test_demo.py`."""

import json
import os

from keras_dml.demo import demo_methods


def demo_folder_problems(folder, methods=None, cwd=None):
    """One line per problem of the demo output in `folder` (`[]` when it is complete).

    Args:
        folder: the demo's `--output` folder.
        methods: the methods the demo ran. Defaults to `None` (every demo method).
        cwd: the folder the demo ran in (its paths are relative to it). Defaults to `None`
            (this process's).
    """
    methods = list(methods or demo_methods())
    path = os.path.join(cwd or "", folder, "results.json")
    if not os.path.isfile(path):
        return [f"{folder}: no results.json (the demo did not finish)"]
    with open(path) as f:
        summary = json.load(f)
    rows = summary["results"]
    problems = []

    def at(relative):
        return os.path.join(cwd or "", relative)

    if [row["method"] for row in rows] != methods:
        problems.append(f"results.json has {[r['method'] for r in rows]}, not {methods}")
    if summary["best_method"] not in methods:
        problems.append(f"best_method {summary['best_method']!r} is not a demo method")
    if not os.path.isdir(at(summary["exports"]["saved_model"])):
        problems.append(f"no SavedModel export at {summary['exports']['saved_model']}")
    if not os.path.isfile(at(summary["exports"].get("onnx", ""))):
        problems.append(f"no ONNX export: {summary['exports']}")
    for row in rows:
        if not (0.0 < row["recall@1"] <= 1.0 and 0.0 <= row["map@r"] <= 1.0):
            problems.append(f"{row['method']}: test R@1 {row['recall@1']}, MAP@R {row['map@r']}")
        run_dir = at(row["run_dir"])
        for name in ("model.keras", "report.html"):
            if not os.path.isfile(os.path.join(run_dir, name)):
                problems.append(f"{row['method']}: no {name} in {run_dir}")
        with open(os.path.join(run_dir, "history.json")) as f:
            best = max(json.load(f)["val_map@r"])
        if row["val_map@r"] != best:
            problems.append(f"{row['method']}: val MAP@R {row['val_map@r']} is not its best {best}")
    return problems
