"""Reading a PyTorch state dict: a `.pth` / `.pt` file (needs torch) or a dict of arrays."""

import os
import warnings
from collections.abc import Mapping

import numpy as np

# Entries of a training checkpoint that hold the model's state dict, in the order tried.
WRAPPER_KEYS = ("state_dict", "model_state_dict", "model", "net")
# Key prefixes of a model saved inside a wrapper: DataParallel / DDP, then `torch.compile`.
WRAPPER_PREFIXES = ("module.", "_orig_mod.")


def _to_numpy(value):
    if hasattr(value, "detach"):  # a torch.Tensor
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _unreadable_reason(path, error):
    if os.path.getsize(path) == 0:
        return "the file is empty (0 bytes)"
    if "Unsupported global" in str(error):
        return (
            "it holds pickled Python objects besides tensors (a whole model saved with "
            "`torch.save(model)`?); save `model.state_dict()` instead"
        )
    return f"it is not a file `torch.save` wrote, or it is corrupt ({type(error).__name__})"


def _read_file(path, expected):
    if not os.path.exists(path):
        raise FileNotFoundError(f"State dict file not found: {path!r}.")
    try:
        import torch
    except ImportError as error:
        raise ImportError(
            f"Reading the PyTorch file {path!r} needs torch (the `backends` extra): pip "
            "install torch --index-url https://download.pytorch.org/whl/cpu, or pass a "
            "dict of numpy arrays."
        ) from error
    try:
        with warnings.catch_warnings():  # torch's note on the pickle protocol of other files
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises EOFError, KeyError, UnpicklingError, RuntimeError
        reason = _unreadable_reason(path, error)
        raise ValueError(f"Cannot read {path!r} as {expected}: {reason}.") from None


def _unwrap(state_dict, label):
    """The state dict under a training checkpoint's `state_dict` / `model` entries, with a note."""
    keys = []
    while isinstance(state_dict, Mapping):
        key = next((k for k in WRAPPER_KEYS if isinstance(state_dict.get(k), Mapping)), None)
        if key is None:
            break
        keys.append(key)
        state_dict = state_dict[key]
    if keys:
        entry = "".join(f"[{key!r}]" for key in keys)
        warnings.warn(
            f"{label} is a training checkpoint: converting its {entry} entry.", stacklevel=4
        )
    return state_dict


def _strip_prefixes(state_dict, label):
    """Drops a `module.` (DataParallel / DDP) or `_orig_mod.` prefix on every key, with a note."""
    while True:
        prefix = next((p for p in WRAPPER_PREFIXES if all(k.startswith(p) for k in state_dict)), "")
        if not prefix:
            return state_dict
        state_dict = {key[len(prefix) :]: value for key, value in state_dict.items()}
        warnings.warn(
            f"Every key of {label} starts with {prefix!r} (a model saved from DataParallel, "
            "DistributedDataParallel or torch.compile): converting them without it.",
            stacklevel=4,  # the caller of `convert_state_dict`
        )


def load_state_dict(state_dict, source="PyTorch"):
    """A state dict (mapping, or `.pth` / `.pt` file from `torch.save`) as `{key: numpy array}`.

    Args:
        state_dict: str, path or mapping. The `.pth` / `.pt` file or the state dict.
        source: str. The network it must hold, for messages. Defaults to `"PyTorch"`.

    Raises:
        ImportError: a file is given and torch is not installed.
        FileNotFoundError: the file does not exist.
        ValueError: one line when the file or object holds no state dict.
    """
    expected = f"a PyTorch state dict of {source}"
    label = "the state dict"
    if isinstance(state_dict, (str, os.PathLike)):
        label = repr(os.fspath(state_dict))
        state_dict = _read_file(os.fspath(state_dict), expected)
    state_dict = _unwrap(state_dict, label)
    if not isinstance(state_dict, Mapping) or not state_dict:
        raise ValueError(
            f"Expected {expected} (a non-empty mapping of parameter names to tensors, e.g. "
            f"`model.state_dict()`) in {label}. Received: {type(state_dict).__name__}"
            f"{' (empty)' if isinstance(state_dict, Mapping) else ''}."
        )
    entries = [key for key, value in state_dict.items() if isinstance(value, Mapping)]
    if entries:
        raise ValueError(
            f"Expected {expected} in {label}, but its entries {entries[:5]} are mappings, not "
            f"tensors: pass the entry that holds the state dict (tried {list(WRAPPER_KEYS)})."
        )
    state_dict = _strip_prefixes({str(key): value for key, value in state_dict.items()}, label)
    return {key: _to_numpy(value) for key, value in state_dict.items()}
