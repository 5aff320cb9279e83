"""`MHeads`: the M-heads ensemble baseline of ABE (Lee et al. 2015; Kim et al. Fig. 1a)."""

import keras
from keras import ops

from keras_dml.models.attention.branching import (
    copy_segment,
    resolve_branches,
    split_backbone,
)
from keras_dml.models.attention.split_ensemble import SplitEnsembleBase

# Where M-heads' shared part ends when it differs from ABE's `S`: the cut its benchmark rows
# were measured with (docs/methods/mheads.md).
MHEADS_BRANCH_POINTS = {"vgg_small": "block1"}


@keras.saving.register_keras_serializable(package="keras_dml")
class MHeads(SplitEnsembleBase):
    """M-heads ensemble: a shared bottom `S`, M separate global embedding functions `G_m`.

    Learner m embeds an image as `g_m(s(x))`; `num_learners=1` is the "1-head" baseline.

    Args:
        backbone: `keras.Model`. Functional model from raw pixels to a 4-D feature map.
        num_learners: int. M. Defaults to `8`.
        embedding_dim: int. Ensemble size; each learner gets `embedding_dim / M`. Defaults to `512`.
        branch_point: str. Layer or split point where the shared part ends. Defaults to `None`
            (`MHEADS_BRANCH_POINTS`, else where `ABE`'s `S` ends).
        embedding_bias: bool. Bias in each head's embedding layer. Defaults to `False`.
        pooling: str. `"avg"`, `"max"` or `"avgmax"`. Defaults to `"avg"`.
        dropout: float. Dropout before the embedding layers. Defaults to `0.0`.
        margin: float. Contrastive margin `m_c` (Eq. 10). Defaults to `1.0`.
        metric_loss: str or dict. A `keras_dml.losses` loss replacing Eq. 10. Defaults to `None`.
        lambda_div: float. Weight of the divergence loss. Defaults to `0.0`.
        divergence_margin: float. `m_div` (Eq. 9). Defaults to `1.0`.
        divergence_pairs: str. `"self"` or `"all"`. Defaults to `"self"`.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Examples:
    >>> import keras, keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = keras_dml.models.MHeads(backbone, num_learners=4, embedding_dim=64)
    >>> model.compile(optimizer=keras.optimizers.SGD(1e-3, momentum=0.9))

    References:
        Lee, Purushwalkam, Cogswell, Crandall, Batra, "Why M Heads are Better than One",
        arXiv 1511.06314, 2015. Kim et al., "Attention-based Ensemble for Deep Metric
        Learning", ECCV 2018: Eq. 4, Fig. 1a, Tables 1 and 3.
    """

    def __init__(
        self,
        backbone,
        num_learners=8,
        embedding_dim=512,
        branch_point=None,
        embedding_bias=False,
        **kwargs,
    ):
        # Plain settings first: the base `__init__` checks the shared arguments, then calls
        # `_build_parts`, which reads them (pooling, dropout and the loss arguments: `**kwargs`).
        self.branch_point = branch_point
        self.embedding_bias = bool(embedding_bias)
        kwargs.setdefault("lambda_div", 0.0)
        super().__init__(backbone, num_learners, embedding_dim, **kwargs)

    def _build_parts(self, backbone):
        """The shared `S`, one `G_m` per learner (learner 0: the backbone's own) and the heads."""
        if self.branch_point is None:
            default = MHEADS_BRANCH_POINTS.get(backbone.name)
            self.branch_point = default if default is not None else resolve_branches(backbone)[0]
        self.branch_point = str(self.branch_point)
        self.spatial_extractor, first = split_backbone(backbone, self.branch_point)
        self.global_extractors = [first] + [
            copy_segment(
                backbone,
                self.branch_point,
                None,
                name=f"global_extractor_{m}",
                prefix=f"head_{m}_",
            )
            for m in range(1, self.num_learners)
        ]
        # float32 heads under a mixed-precision policy: the embedding is the model's output.
        self.heads = [
            keras.layers.Dense(
                dim, use_bias=self.embedding_bias, dtype="float32", name=f"learner_{m}_head"
            )
            for m, dim in enumerate(self.learner_dims)
        ]

    def build(self, input_shape):
        for extractor, head in zip(self.global_extractors, self.heads):
            head.build((None, int(extractor.outputs[0].shape[-1])))
        self.built = True

    def raw_learner_embeddings(self, images, training=False):
        """Learner embeddings before normalisation, `[N, M, d]` (one `G_m` call per learner)."""
        features = self.spatial_extractor(images, training=training)
        raw = []
        for extractor, head in zip(self.global_extractors, self.heads):
            pooled = self.pool(extractor(features, training=training))
            raw.append(head(self.dropout_layer(pooled, training=training)))
        return ops.stack(raw, axis=1)

    def learner_model(self, learner, target="features"):
        """Functional model of one learner for Grad-CAM: images -> raw embedding `[N, d]`.

        Args:
            learner: int. The learner m.
            target: str. `"spatial"` (S(x)) or `"features"` (G_m's map). Defaults to `"features"`.

        Returns:
            A functional `keras.Model` whose `gradcam_target` layer marks the chosen stage.
        """
        if target not in ("spatial", "features"):
            raise ValueError(
                f"`target` must be 'spatial' or 'features' for MHeads. Received: target={target!r}"
            )
        if not 0 <= int(learner) < self.num_learners:
            raise ValueError(
                f"`learner` must be in [0, {self.num_learners}). Received: learner={learner}"
            )

        def global_part(features, mark):
            del mark  # M-heads marks no stage inside G_m
            return self.global_extractors[int(learner)](features)

        return self._gradcam_model(learner, target, global_part, self.heads[int(learner)])

    def get_config(self):
        config = self._base_config()
        config["embedding_bias"] = self.embedding_bias
        return config
