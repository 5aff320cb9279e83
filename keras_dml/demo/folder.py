"""The demo's output folder: new or empty, or an earlier demo's with `overwrite`; no Keras here."""

import os
import shutil

# What `keras_dml.demo.run_demo` writes next to the methods' run folders.
DEMO_OUTPUTS = ("results.json", "best.onnx", "best_saved_model")


def check_demo_folder(output_dir, overwrite=False):
    """Checks that the demo may write into `output_dir` (replacing files only with `overwrite`).

    Raises:
        FileExistsError: `output_dir` is a file, or a folder holding files while `overwrite` is
            false; the message names `--overwrite` and a new folder as the fixes.
    """
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise FileExistsError(
            f"The demo's output {output_dir!r} is a file, not a folder; choose a folder with "
            f"--output, e.g. --output {output_dir}_demo."
        )
    if overwrite or not os.path.isdir(output_dir) or not os.listdir(output_dir):
        return
    raise FileExistsError(
        f"The demo's output folder {output_dir!r} already holds files; pass --overwrite "
        f"(Python: overwrite=True) to replace an earlier demo there, or choose a new folder, "
        f"e.g. --output {output_dir.rstrip(os.sep)}_2."
    )


def clear_demo_folder(output_dir, methods):
    """Removes what an earlier demo wrote in `output_dir`: the run folders of `methods`, results."""
    for name in (*methods, *DEMO_OUTPUTS):
        path = os.path.join(output_dir, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)
