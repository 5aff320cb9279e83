"""Pretrained weights for backbones: Keras downloads with a clear offline error, local files."""

import contextlib
import os

WEIGHTS_SUFFIXES = (".weights.h5", ".h5", ".hdf5")


class WeightsUnavailableError(OSError):
    """Pretrained weights could not be obtained (no network, blocked host, corrupted cache)."""


def _is_download_failure(error):
    message = str(error)
    if "URL fetch failure" in message or "corrupted file" in message:
        return True
    seen = error
    while seen is not None:
        if isinstance(seen, OSError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@contextlib.contextmanager
def keras_download_errors(backbone, file_name, url):
    """Turns a failed Keras download of `file_name` from `url` into a `WeightsUnavailableError`."""
    try:
        yield
    except Exception as error:
        if not _is_download_failure(error):
            raise
        cache = os.path.join(os.path.expanduser(os.environ.get("KERAS_HOME", "~/.keras")), "models")
        raise WeightsUnavailableError(
            f"Could not obtain the ImageNet weights of backbone {backbone!r}: Keras failed to "
            f"download {url} ({error}). Without network access, copy that file to a machine "
            f"that can reach it and either place it in the Keras cache ({cache}/{file_name}) "
            f"and keep weights='imagenet', or pass its path: "
            f"keras_dml.backbones.get({backbone!r}, weights='/path/{file_name}')."
        ) from error


def check_weights_argument(weights):
    """Returns `weights` (None, `"imagenet"` or an absolute path) after checking it.

    Raises:
        ValueError: a value that is none of these.
        FileNotFoundError: a path that does not exist.
    """
    if weights is None or weights == "imagenet":
        return weights
    if not isinstance(weights, (str, os.PathLike)):
        raise ValueError(
            "`weights` must be None (random initialisation), 'imagenet', a recipe's weights "
            "object (pretrained, source_file, source_sha256) or the path of a weights file "
            f"({', '.join(WEIGHTS_SUFFIXES)}). Received: weights={weights!r}"
        )
    path = os.fspath(weights)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"Weights file not found: {path!r}. Pass None, 'imagenet' or the path of an existing "
            f"weights file ({', '.join(WEIGHTS_SUFFIXES)})."
        )
    if not path.endswith(WEIGHTS_SUFFIXES):
        raise ValueError(
            f"Unsupported weights file {path!r}: expected a Keras weights file ending in "
            f"{' or '.join(WEIGHTS_SUFFIXES)} (save one with `model.save_weights(path)`)."
        )
    return os.path.abspath(path)


def load_weights_file(model, path):
    """Loads a `.weights.h5` or Keras 2 `.h5` file into a backbone (`ValueError` if it misfits)."""
    try:
        model.load_weights(path)
    except (ValueError, KeyError) as error:
        raise ValueError(
            f"The weights file {path!r} does not fit {model.name!r} as built "
            f"(input {model.input_shape}, {len(model.weights)} weights): {error}. Build the "
            "backbone with the same name and options as the model that saved the file."
        ) from error
