"""BIER's diversity losses: Activation Loss (Eq. 4-6) and Adversarial Loss (Eq. 7-9)."""

import keras
from keras import ops

from keras_dml.layers.gradient_reversal import GradientReversal


def unit_norm_penalty(kernel):
    """`sum_i (w_i^T w_i - 1)^2` over the columns (output units) of a `[in, out]` kernel (Eq. 5)."""
    kernel = ops.cast(kernel, "float32")
    return ops.sum(ops.square(ops.sum(ops.square(kernel), axis=0) - 1.0))


def bias_norm_penalty(bias):
    """`max(0, b^T b - 1)` (first term of Eq. 8)."""
    bias = ops.cast(bias, "float32")
    return ops.relu(ops.sum(ops.square(bias)) - 1.0)


def _check_common(group_sizes, lambda_weight):
    group_sizes = tuple(int(d) for d in group_sizes)
    if len(group_sizes) < 2 or min(group_sizes) < 1:
        raise ValueError(
            "A diversity loss needs at least two learners with positive sizes. "
            f"Received: group_sizes={group_sizes}"
        )
    if float(lambda_weight) < 0:
        raise ValueError(f"`lambda_weight` must be >= 0. Received: lambda_weight={lambda_weight}")
    return group_sizes, float(lambda_weight)


@keras.saving.register_keras_serializable(package="keras_dml")
class ActivationDiversity(keras.layers.Layer):
    """Activation Loss: for each sample only one learner should be active (Eq. 4-6).

    Args:
        group_sizes: sequence of int. Learner sizes `d_m`.
        lambda_weight: float. Weight of the unit-norm penalty (Eq. 5). Defaults to `100.0`.
        **kwargs: standard layer arguments.

    Call arguments:
        embeddings: list of M float tensors `[N, d_m]`, raw learner embeddings.
        kernels: list of M embedding kernels `[h, d_m]`. Defaults to `None` (no penalty).

    Returns:
        Scalar float32 loss.

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 3.2.1, Eq. 4-6.
    """

    def __init__(self, group_sizes, lambda_weight=100.0, **kwargs):
        super().__init__(**kwargs)
        self.group_sizes, self.lambda_weight = _check_common(group_sizes, lambda_weight)
        self.built = True

    def call(self, embeddings, kernels=None):
        # Eq. 4's double sum over dimension pairs factorises into ||f_i||^2 ||f_j||^2: O(N d).
        energies = [ops.sum(ops.square(ops.cast(f, "float32")), axis=-1) for f in embeddings]
        loss = 0.0
        for i in range(len(energies)):
            for j in range(i + 1, len(energies)):
                loss = loss + ops.mean(energies[i] * energies[j])
        if kernels is not None and self.lambda_weight > 0:
            loss = loss + self.lambda_weight * sum(unit_norm_penalty(w) for w in kernels)
        return loss

    def get_config(self):
        config = super().get_config()
        config.update({"group_sizes": list(self.group_sizes), "lambda_weight": self.lambda_weight})
        return config


@keras.saving.register_keras_serializable(package="keras_dml")
class AdversarialDiversity(keras.layers.Layer):
    """Adversarial Loss: regressors between learner pairs behind gradient reversal (Eq. 7-9).

    Args:
        group_sizes: sequence of int. Learner sizes `d_m`.
        hidden_units: int. Hidden size of each regressor. Defaults to `512`.
        lambda_weight: float. Weight of `L_weight` (Eq. 8). Defaults to `100.0`.
        reversal: float. Gradient reversal factor. Defaults to `1.0`.
        **kwargs: standard layer arguments.

    Call arguments:
        embeddings: list of M float tensors `[N, d_m]`, raw learner embeddings.
        kernels: list of M embedding kernels `[h, d_m]`. Defaults to `None`.

    Returns:
        Scalar float32 loss (Eq. 9).

    References:
        Opitz et al., TPAMI 2020, Sec. 3.2.2, Eq. 7-9; Ganin and Lempitsky, ICML 2015.
    """

    def __init__(self, group_sizes, hidden_units=512, lambda_weight=100.0, reversal=1.0, **kwargs):
        super().__init__(**kwargs)
        self.group_sizes, self.lambda_weight = _check_common(group_sizes, lambda_weight)
        if int(hidden_units) < 1:
            raise ValueError(f"`hidden_units` must be >= 1. Received: hidden_units={hidden_units}")
        self.hidden_units = int(hidden_units)
        self.reversal_lambda = float(reversal)
        self.reversal = GradientReversal(lambda_=reversal, name="reversal")
        self.pairs = [
            (i, j)
            for i in range(len(self.group_sizes))
            for j in range(i + 1, len(self.group_sizes))
        ]
        self.regressors = []
        for i, j in self.pairs:
            hidden = keras.layers.Dense(
                self.hidden_units, activation="relu", name=f"regressor_{j}_to_{i}_hidden"
            )
            output = keras.layers.Dense(self.group_sizes[i], name=f"regressor_{j}_to_{i}_output")
            hidden.build((None, self.group_sizes[j]))
            output.build((None, self.hidden_units))
            self.regressors.append((hidden, output))
        self.built = True

    def regressor_penalty(self):
        """`L_weight` of the regressors: unit-norm kernels and bias hinges (Eq. 8)."""
        total = 0.0
        for layers in self.regressors:
            for layer in layers:
                total = total + unit_norm_penalty(layer.kernel) + bias_norm_penalty(layer.bias)
        return total

    def similarity_losses(self, embeddings):
        """Batch means of `L_sim(i, j)` (Eq. 7), one per learner pair `(i, j)`, `i < j`."""
        reversed_ = [self.reversal(ops.cast(f, "float32")) for f in embeddings]
        losses = []
        for (i, j), (hidden, output) in zip(self.pairs, self.regressors):
            projected = output(hidden(reversed_[j]))
            product = ops.cast(reversed_[i], "float32") * ops.cast(projected, "float32")
            losses.append(ops.mean(ops.sum(ops.square(product), axis=-1)) / self.group_sizes[j])
        return losses

    def call(self, embeddings, kernels=None):
        loss = -sum(self.similarity_losses(embeddings))
        if self.lambda_weight > 0:
            penalty = self.regressor_penalty()
            if kernels is not None:
                penalty = penalty + sum(unit_norm_penalty(w) for w in kernels)
            loss = loss + self.lambda_weight * penalty
        return loss

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "group_sizes": list(self.group_sizes),
                "hidden_units": self.hidden_units,
                "lambda_weight": self.lambda_weight,
                "reversal": self.reversal_lambda,
            }
        )
        return config


def get_diversity(name, group_sizes, lambda_weight=100.0, hidden_units=512):
    """Builds the diversity layer called `name` (`"activation"` or `"adversarial"`)."""
    if name == "activation":
        return ActivationDiversity(group_sizes, lambda_weight=lambda_weight, name="diversity")
    if name == "adversarial":
        return AdversarialDiversity(
            group_sizes, hidden_units=hidden_units, lambda_weight=lambda_weight, name="diversity"
        )
    raise ValueError(
        f"`diversity` must be None, 'activation' or 'adversarial'. Received: diversity={name!r}"
    )
