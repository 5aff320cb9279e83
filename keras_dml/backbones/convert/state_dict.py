"""Reading a PyTorch state dict: a `.pth` / `.pt` file (needs torch) or a dict of arrays."""

import os

import numpy as np


def _to_numpy(value):
    if hasattr(value, "detach"):  # a torch.Tensor
        return value.detach().cpu().numpy()
    return np.asarray(value)


def load_state_dict(state_dict):
    """Returns a state dict as `{key: numpy array}`.

    Args:
        state_dict: a mapping of parameter names to arrays / torch tensors, or the path of a
            `.pth` / `.pt` file written by `torch.save` (a state dict, or a checkpoint holding
            one under `"state_dict"`). Reading a file needs PyTorch.

    Returns:
        dict str -> `np.ndarray`, in the source's key order.

    Raises:
        ImportError: when a file is given and torch is not installed.
        FileNotFoundError: when the file does not exist.
        ValueError: when the file or object holds no state dict.

    Examples:
    >>> load_state_dict({"conv1.weight": np.zeros((64, 3, 7, 7))})["conv1.weight"].shape
    (64, 3, 7, 7)
    """
    if isinstance(state_dict, (str, os.PathLike)):
        path = os.fspath(state_dict)
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
        state_dict = torch.load(path, map_location="cpu", weights_only=True)
    if isinstance(state_dict, dict) and isinstance(state_dict.get("state_dict"), dict):
        state_dict = state_dict["state_dict"]
    if not isinstance(state_dict, dict) or not state_dict:
        raise ValueError(
            "Expected a PyTorch state dict (a non-empty mapping of parameter names to tensors, "
            f"e.g. `model.state_dict()`). Received: {type(state_dict).__name__}"
        )
    return {str(key): _to_numpy(value) for key, value in state_dict.items()}
