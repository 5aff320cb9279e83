"""`SoftMask`: K learnable (or fixed orthogonal) masks carving subspaces out of one embedding."""

import keras
import numpy as np
from keras import ops


def block_masks(num_masks, dim, num_active=None):
    """`[num_masks, dim]` float32 0/1 masks: the first `num_active` rows split `dim` into blocks."""
    num_active = num_masks if num_active is None else int(num_active)
    masks = np.zeros((num_masks, dim), np.float32)
    for k, block in enumerate(np.array_split(np.arange(dim), num_active)):
        masks[k, block] = 1.0
    return masks


@keras.saving.register_keras_serializable(package="keras_dml")
class SoftMask(keras.layers.Layer):
    """`num_masks` soft masks `s_k` re-weighting the dimensions of one embedding `f(x)`.

    Args:
        num_masks: int. K_max, the number of masks. Defaults to `1`.
        fixed: bool. Non-trainable disjoint block masks. Defaults to `False`.
        epsilon: float. Added under square roots of norms. Defaults to `1e-12`.
        **kwargs: standard `keras.layers.Layer` arguments.

    Call arguments:
        inputs: float tensor `[N, D]`, the raw embedding `f(x)`.

    Returns:
        float32 tensor `[N, num_masks, D]`: every subspace embedding `L2(f * relu(s_k))`.

    References:
        Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI 2021,
        Sec. 3.1.2, Eq. (4) (masked subspaces), Eq. (5) (mask orthogonality), Eq. (8) (final
        embedding); Tab. 2 (fixed vs learned masks).
    """

    def __init__(self, num_masks=1, fixed=False, epsilon=1e-12, **kwargs):
        super().__init__(**kwargs)
        if isinstance(num_masks, bool) or not isinstance(num_masks, (int, np.integer)):
            raise ValueError(f"`num_masks` must be an int. Received: num_masks={num_masks!r}")
        if num_masks < 1:
            raise ValueError(f"`num_masks` must be >= 1. Received: num_masks={num_masks}")
        if float(epsilon) <= 0.0:
            raise ValueError(f"`epsilon` must be > 0. Received: epsilon={epsilon}")
        self.num_masks = int(num_masks)
        self.fixed = bool(fixed)
        self.epsilon = float(epsilon)

    def build(self, input_shape):
        dim = input_shape[-1]
        if dim is None:
            raise ValueError(f"SoftMask needs a known last dimension. Received: {input_shape}")
        if self.fixed and dim < self.num_masks:
            raise ValueError(
                f"Fixed masks need at least one dimension per mask: embedding size {dim} < "
                f"num_masks={self.num_masks}."
            )
        self.dim = int(dim)
        self.masks = self.add_weight(
            shape=(self.num_masks, self.dim),
            initializer="ones",
            trainable=not self.fixed,
            name="masks",
        )
        self.reset()

    # -- state updates (eager, between epochs) ---------------------------------------------------
    def initial_masks(self, num_active=None):
        """Initial values: all ones (learned) or disjoint blocks over `num_active` rows (fixed)."""
        if not self.fixed:
            return np.ones((self.num_masks, self.dim), np.float32)
        return block_masks(self.num_masks, self.dim, num_active)

    def reset(self, num_active=None):
        """Resets the masks to `initial_masks(num_active)`."""
        self.masks.assign(self.initial_masks(num_active))

    def block_size(self, index):
        """Number of dimensions mask `index` keeps (its non-zero entries after the ReLU)."""
        values = ops.convert_to_numpy(self.masks)[int(index)]
        return int(np.sum(values > 0))

    def split(self, parents):
        """Re-assigns the masks after a division: new mask j descends from old mask `parents[j]`.

        Raises:
            ValueError: bad parents, too many new masks, or a fixed block too small to halve.
        """
        parents = np.asarray(parents, np.int64).reshape(-1)
        if parents.size == 0 or parents.size > self.num_masks:
            raise ValueError(
                f"`parents` must name 1..{self.num_masks} new masks. Received {parents.tolist()}."
            )
        if parents.min() < 0 or parents.max() >= self.num_masks:
            raise ValueError(f"`parents` holds ids outside [0, {self.num_masks}): {parents}.")
        counts = np.bincount(parents, minlength=self.num_masks)
        if counts.max() > 2:
            raise ValueError(f"A mask can have at most 2 children. Received parents {parents}.")
        old = ops.convert_to_numpy(self.masks)
        new = old.copy()
        seen = np.zeros((self.num_masks,), np.int64)
        for child, parent in enumerate(parents):
            row = old[parent].copy()
            if self.fixed and counts[parent] == 2:
                block = np.flatnonzero(row > 0)
                if block.size < 2:
                    raise ValueError(
                        f"Fixed mask {parent} keeps {block.size} dimension(s) and cannot be halved."
                    )
                half = np.array_split(block, 2)[seen[parent]]
                row = np.zeros_like(row)
                row[half] = 1.0
            seen[parent] += 1
            new[child] = row
        self.masks.assign(new)

    # -- forward pieces (keras.ops) ---------------------------------------------------------------
    def relu_masks(self):
        """`relu(s)`: float32 tensor `[num_masks, D]`."""
        return ops.relu(ops.cast(self.masks, "float32"))

    def _active(self, num_active):
        if num_active is None:
            return ops.ones((self.num_masks,), "float32")
        index = ops.arange(self.num_masks, dtype="int32")
        return ops.cast(ops.less(index, ops.cast(num_active, "int32")), "float32")

    def _normalize(self, x):
        return x / ops.sqrt(
            ops.maximum(ops.sum(ops.square(x), axis=-1, keepdims=True), self.epsilon)
        )

    def subspace(self, inputs, index):
        """`L2(f * relu(s_index))` (Eq. 4); `index` is an int or a scalar int tensor."""
        mask = ops.take(self.relu_masks(), ops.cast(index, "int32"), axis=0)
        return self._normalize(ops.cast(inputs, "float32") * mask)

    def combine(self, inputs, num_active=None):
        """`L2(f * sum_{k < num_active} relu(s_k))`, the final embedding of Eq. 8."""
        weights = ops.sum(self.relu_masks() * self._active(num_active)[:, None], axis=0)
        return self._normalize(ops.cast(inputs, "float32") * weights)

    def orthogonality_loss(self, num_active=None):
        """Eq. 5: mean cosine of `relu(s_i), relu(s_j)` over active `i != j` (0 below two)."""
        masks = self.relu_masks()
        norms = ops.sqrt(ops.sum(ops.square(masks), axis=-1) + self.epsilon)
        unit = masks / norms[:, None]
        cosine = ops.matmul(unit, ops.transpose(unit))
        active = self._active(num_active)
        pairs = active[:, None] * active[None, :] * (1.0 - ops.eye(self.num_masks))
        return ops.sum(cosine * pairs) / ops.maximum(ops.sum(pairs), 1.0)

    def call(self, inputs):
        inputs = ops.cast(inputs, "float32")
        return self._normalize(inputs[:, None, :] * self.relu_masks()[None, :, :])

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.num_masks, input_shape[-1])

    def get_config(self):
        config = super().get_config()
        config.update({"num_masks": self.num_masks, "fixed": self.fixed, "epsilon": self.epsilon})
        return config
