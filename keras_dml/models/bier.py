"""`BIER`: Boosting Independent Embeddings Robustly (and A-BIER with the adversarial loss)."""

import math

import keras
from keras import ops

from keras_dml.layers.diversity import get_diversity
from keras_dml.models.boosting.arguments import (  # noqa: F401 (re-exported)
    DEFAULT_LAMBDA_DIV,
    DIVERSITIES,
    OUTPUT_WEIGHTINGS,
    check_bier_arguments,
)
from keras_dml.models.boosting.objective import BIERObjective
from keras_dml.models.boosting.weights import boosting_weights
from keras_dml.models.distribution import ForwardCache
from keras_dml.models.embedding_model import EmbeddingModel, l2_normalize
from keras_dml.optimizers import with_multipliers

# The variables of the embedding heads (learners), for per-variable learning rates.
HEAD_PATTERN = r"learner_\d+_head/"


@keras.saving.register_keras_serializable(package="keras_dml")
class BIER(BIERObjective, EmbeddingModel):
    """Embedding groups trained as an online gradient boosting ensemble, optionally with diversity.

    Group m is L2-normalised and multiplied by `sqrt(alpha_m)`, so a dot product of two outputs is
    the ensemble similarity of Eq. 3 (docs/methods/bier.md).

    Args:
        backbone: `keras.Model`. Functional model from raw pixels to a 4-D feature map.
        group_sizes: sequence of int. Learner sizes. Defaults to `None` (`boosting_group_sizes`).
        embedding_dim: int. Total size when `group_sizes` is `None`. Defaults to `512`.
        num_learners: int. Number of learners when `group_sizes` is `None`. Defaults to `3`.
        loss: str. `"binomial_deviance"` (default), `"contrastive"` or `"triplet"` (Table 1).
        loss_options: dict. Loss parameters over the paper's defaults. Defaults to `None`.
        diversity: str. `None`, `"activation"` or `"adversarial"` (A-BIER). Defaults to `None`.
        lambda_div: float. Weight of the diversity loss (Eq. 11). Defaults to `None` (`1e-2` for
            `"activation"`, `1e-3` for `"adversarial"`, Fig. 7).
        lambda_weight: float. Weight of the unit-norm penalties (Eq. 5, 8). Defaults to `100.0`.
        regressor_units: int. Hidden size of the adversarial regressors. Defaults to `512`.
        boosting: str. `"paper"` (Algorithm 1, default) or `"reference"` (the authors' code).
        shrinkage: float. Step of the `"reference"` variant's running margin. Defaults to `0.06`.
        output_weighting: str. `"sqrt_alpha"` or `"alpha"`. Defaults to `"sqrt_alpha"`.
        pooling: str. `"avg"`, `"max"` or `"avgmax"`. Defaults to `"avg"`.
        dropout: float. Dropout on the pooled features. Defaults to `0.0`.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Examples:
    >>> import keras, keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = keras_dml.models.BIER(backbone, embedding_dim=64, diversity="adversarial")
    >>> model.compile(optimizer=keras.optimizers.Adam(1e-4))

    References:
        Opitz, Waltner, Possegger, Bischof, "Deep Metric Learning with BIER: Boosting Independent
        Embeddings Robustly", TPAMI 2020: Sec. 3.1 (Eq. 1-3, Algorithm 1), Sec. 3.2-3.3
        (Eq. 4-11), Appendix B (triplets), Appendix C (group sizes).
    """

    def __init__(
        self,
        backbone,
        group_sizes=None,
        embedding_dim=512,
        num_learners=3,
        loss="binomial_deviance",
        loss_options=None,
        diversity=None,
        lambda_div=None,
        lambda_weight=100.0,
        regressor_units=512,
        boosting="paper",
        shrinkage=0.06,
        output_weighting="sqrt_alpha",
        pooling="avg",
        dropout=0.0,
        **kwargs,
    ):
        group_sizes, loss_form, lambda_div = check_bier_arguments(
            group_sizes,
            embedding_dim,
            num_learners,
            loss,
            loss_options,
            diversity,
            lambda_div,
            boosting,
            output_weighting,
        )
        alphas = boosting_weights(len(group_sizes))
        scales = [math.sqrt(a) for a in alphas] if output_weighting == "sqrt_alpha" else alphas
        # Plain settings first: `EmbeddingModel.__init__` calls `build`, which creates the
        # diversity layer and the loss trackers from them (state is locked after `build`).
        self.group_sizes = group_sizes
        self.alphas = alphas
        self.loss_form = loss_form
        self.loss_name = loss
        self.loss_options = dict(loss_options or {})
        self.diversity = diversity
        self.lambda_div = float(lambda_div)
        self.lambda_weight = float(lambda_weight)
        self.regressor_units = int(regressor_units)
        self.boosting = boosting
        self.shrinkage = float(shrinkage)
        self.output_weighting = output_weighting
        self.embedding_lr_multiplier = 1.0
        self.forward_cache = ForwardCache()
        super().__init__(
            backbone,
            learner_dims=group_sizes,
            learner_weights=scales,
            pooling=pooling,
            dropout=dropout,
            **kwargs,
        )

    def build(self, input_shape):
        self.diversity_layer = None
        if self.diversity is not None:
            self.diversity_layer = get_diversity(
                self.diversity,
                self.group_sizes,
                lambda_weight=self.lambda_weight,
                hidden_units=self.regressor_units,
            )
        names = ["metric_loss"]  # Keras' own tracker reports `loss`
        names += [f"learner_{m}_loss" for m in range(len(self.group_sizes))]
        if self.diversity is not None:
            names.append("diversity_loss")
        self.loss_trackers = {n: keras.metrics.Mean(name=n) for n in names}
        super().build(input_shape)

    # -- forward ------------------------------------------------------------------------------
    def call(self, images, training=False):
        """The weighted, normalised groups, concatenated; training keeps the diversity loss too."""
        images = self.checked_images(images)
        features = self.dropout_layer(self.features(images, training=training), training=training)
        embeddings = self.combine([l2_normalize(head(features)) for head in self.heads])
        output = self.served(images, embeddings, training)
        if training and self.diversity_layer is not None:
            fixed = ops.cast(ops.stop_gradient(features), "float32")
            kernels = [head.kernel for head in self.heads]
            raw = [ops.matmul(fixed, ops.cast(w, "float32")) for w in kernels]
            self.forward_cache.put(output, self.diversity_layer(raw, kernels=kernels))
        return output

    # -- training -------------------------------------------------------------------------------
    def compile(self, optimizer="adam", embedding_lr_multiplier=1.0, **kwargs):
        """Configures training; the boosted metric loss is built in (`BIER(loss=...)`).

        Args:
            optimizer: optimizer instance or name. Defaults to `"adam"`.
            embedding_lr_multiplier: float. Learning-rate factor of the embedding heads
                (`HEAD_PATTERN`; the paper: 10). Defaults to `1.0`.
            **kwargs: passed to `keras.Model.compile`. A `loss` trains each group on its own slice,
                without boosting weights.
        """
        multiplier = float(embedding_lr_multiplier)
        if multiplier <= 0:
            raise ValueError(
                "`embedding_lr_multiplier` must be > 0. "
                f"Received: embedding_lr_multiplier={embedding_lr_multiplier}"
            )
        if multiplier != 1.0:
            optimizer = with_multipliers(optimizer, {HEAD_PATTERN: multiplier})
        self.embedding_lr_multiplier = multiplier
        super().compile(optimizer=optimizer, **kwargs)

    # -- serialization --------------------------------------------------------------------------
    def get_config(self):
        config = super().get_config()
        for key in ("embedding_dim", "num_learners", "learner_dims", "learner_weights"):
            config.pop(key, None)
        config.update(
            {
                "group_sizes": list(self.group_sizes),
                "loss": self.loss_name,
                "loss_options": dict(self.loss_options),
                "diversity": self.diversity,
                "lambda_div": self.lambda_div,
                "lambda_weight": self.lambda_weight,
                "regressor_units": self.regressor_units,
                "boosting": self.boosting,
                "shrinkage": self.shrinkage,
                "output_weighting": self.output_weighting,
            }
        )
        return config
