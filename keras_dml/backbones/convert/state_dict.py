"""Reading a PyTorch state dict: a `.pth` / `.pt` file (needs torch) or a dict of arrays."""

import os

import numpy as np


def _to_numpy(value):
    if hasattr(value, "detach"):  # a torch.Tensor
        return value.detach().cpu().numpy()
    return np.asarray(value)


def load_state_dict(state_dict):
    """A state dict (mapping, or `.pth` / `.pt` file from `torch.save`) as `{key: numpy array}`.

    Raises:
        ImportError: a file is given and torch is not installed.
        FileNotFoundError: the file does not exist.
        ValueError: the file or object holds no state dict.
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
