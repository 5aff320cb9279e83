"""The demo's output folder: a new or empty folder, or an earlier demo's with `overwrite`.

Kept free of Keras so that `keras-dml demo` refuses a folder at once, before TensorFlow loads.
"""

import os
import shutil

# What `keras_dml.demo.run_demo` writes next to the methods' run folders.
DEMO_OUTPUTS = ("results.json", "best.onnx", "best_saved_model")


def check_demo_folder(output_dir, overwrite=False):
    """Checks that the demo may write into `output_dir`.

    Args:
        output_dir: str. The demo's output folder.
        overwrite: bool. Whether files already in the folder may be replaced. Defaults to `False`.

    Raises:
        FileExistsError: `output_dir` is a file, or a folder holding files while `overwrite` is
            false; the message names `--overwrite` and a new folder as the fixes.

    Examples:
    >>> check_demo_folder("a_new_folder")
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
    """Removes what an earlier demo wrote in `output_dir`; other files stay.

    Args:
        output_dir: str. The demo's output folder.
        methods: iterable of str. Every method the demo can run (their run folders go, so that
            a method trains afresh instead of resuming the earlier run).
    """
    for name in (*methods, *DEMO_OUTPUTS):
        path = os.path.join(output_dir, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)
