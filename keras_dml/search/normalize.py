"""Row-wise L2 normalisation of gallery and query vectors."""

import numpy as np


def l2_normalize(x):
    """Row-wise L2 normalisation in float32."""
    x = np.asarray(x, dtype=np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
