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

    The embedding layer on top of the backbone is split into M groups (learners) of sizes
    proportional to their boosting weights `alpha_m` (96-160-256 for 512). `compute_loss` runs
    Algorithm 1 in one forward pass: learner m is trained on pairs (or triplets) reweighted by the
    negative loss gradient at the ensemble score of learners 1..m-1 (see
    `boosted_learner_losses`), and the learners' losses are summed (Eq. 11 adds
    `lambda_div * L_div`). The diversity loss (`"activation"`, Eq. 4-6, or `"adversarial"`,
    Eq. 7-9, i.e. A-BIER) is computed on the embedding layer applied to `stop_gradient` backbone
    features, so it trains the embedding (and the regressors) but never the backbone.

    Inference (`call`): each group L2-normalised, multiplied by `sqrt(alpha_m)` and concatenated,
    so the dot product of two outputs is exactly the ensemble similarity
    `F = sum_m alpha_m s_m` of Eq. 3. `output_weighting="alpha"` multiplies by `alpha_m` instead,
    like the authors' evaluation code (a dot product then weighs learners by `alpha_m^2`).

    Compile with an optimizer only: the metric loss is part of the model (`loss=...`), computed
    in `compute_loss` and stepped by Keras' own `train_step` on every backend. With
    `compile(..., embedding_lr_multiplier=10.0)` the heads learn 10x faster
    (`keras_dml.optimizers.LearningRateMultipliers`), as in the paper's recipe.

    Args:
        backbone: `keras.Model`. Functional model from raw pixels to a 4-D feature map.
        group_sizes: sequence of int. Learner sizes. Defaults to `None`:
            `boosting_group_sizes(embedding_dim, num_learners)` (Table 14).
        embedding_dim: int. Total size when `group_sizes` is `None`. Defaults to `512`.
        num_learners: int. Number of learners when `group_sizes` is `None`. Defaults to `3`.
        loss: str. `"binomial_deviance"`, `"contrastive"` or `"triplet"` (Table 1, on cosine
            similarities). Defaults to `"binomial_deviance"`.
        loss_options: dict. Loss parameters over the paper's defaults (binomial deviance
            alpha 2, beta 0.5, cost 25; contrastive margin 0.5; triplet margin 0.01).
        diversity: `None`, `"activation"` or `"adversarial"`. Auxiliary loss (Sec. 3.3.2).
            Defaults to `None`.
        lambda_div: float. Weight of the diversity loss (Eq. 11). Defaults to `None`: 1e-2 for
            the activation loss, 1e-3 for the adversarial loss (Fig. 7).
        lambda_weight: float. Weight of the unit-norm penalties (Eq. 5, 8). Defaults to `100.0`.
        regressor_units: int. Hidden size of the adversarial regressors. Defaults to `512`.
        boosting: str. `"paper"` (Algorithm 1) or `"reference"` (the authors' TF1 variant,
            binomial deviance only; see METHOD_NOTES). Defaults to `"paper"`.
        shrinkage: float. Step of the `"reference"` variant's running margin. Defaults to `0.06`.
        output_weighting: str. `"sqrt_alpha"` or `"alpha"`, see above. Defaults to
            `"sqrt_alpha"`.
        pooling: str. Global pooling of the backbone features. Defaults to `"avg"`.
        dropout: float. Dropout on the pooled features. Defaults to `0.0`.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Examples:
    >>> import keras, keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = keras_dml.models.BIER(backbone, embedding_dim=64, num_learners=3,
    ...                               diversity="adversarial")
    >>> model.compile(optimizer=keras.optimizers.Adam(1e-4))
    >>> # model.fit(m_per_class_dataset, epochs=10)

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
        """The weighted concatenation of the normalised groups; adds the diversity loss in training.

        In training mode the diversity loss (Eq. 4-9) of the heads applied to `stop_gradient`
        features is computed and kept for the step's `compute_loss` (`forward_cache`), which adds
        it times `lambda_div` to the metric loss (Eq. 11): it trains the heads and the regressors
        but never the backbone.
        """
        images = self.checked_images(images)
        features = self.dropout_layer(self.features(images, training=training), training=training)
        output = self.served(
            images, self.combine([l2_normalize(head(features)) for head in self.heads])
        )
        if training and self.diversity_layer is not None:
            fixed = ops.cast(ops.stop_gradient(features), "float32")
            kernels = [head.kernel for head in self.heads]
            raw = [ops.matmul(fixed, ops.cast(w, "float32")) for w in kernels]
            self.forward_cache.put(output, self.diversity_layer(raw, kernels=kernels))
        return output

    # -- training -------------------------------------------------------------------------------
    def compile(self, optimizer="adam", embedding_lr_multiplier=1.0, **kwargs):
        """Configures training. The boosted metric loss is built in (`BIER(loss=...)`).

        Online boosting needs each pair's loss derivative, which the Table 1 forms give. Any
        other loss, passed here as `loss` (a `keras.losses.Loss`, or a loss layer such as
        `ProxyAnchorLoss(num_classes, embedding_dim=D)` whose class vectors are split into one
        column block per group), trains each group on its own slice with that loss, unweighted:
        the groups then form a plain ensemble without boosting weights, and the diversity loss
        still applies.

        Args:
            optimizer: optimizer instance or name. Defaults to `"adam"`.
            embedding_lr_multiplier: float. Learning-rate factor of the embedding heads (the
                paper: 10). The optimizer is then wrapped in
                `keras_dml.optimizers.LearningRateMultipliers` (pattern `HEAD_PATTERN`), whose
                state `.keras` files store. Defaults to `1.0`.
            **kwargs: passed to `keras.Model.compile`; `loss` replaces boosting (see above).
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
