"""`ABE`: Attention-based Ensemble (Kim et al., ECCV 2018)."""

import keras
import numpy as np
from keras import ops

from keras_dml.layers.attention_branch import AttentionBranch
from keras_dml.models.attention.branching import (
    copy_segment,
    resolve_branches,
    split_backbone,
)
from keras_dml.models.attention.split_ensemble import SplitEnsembleBase


@keras.saving.register_keras_serializable(package="keras_dml")
class ABE(SplitEnsembleBase):
    """ABE-M: M attention masks over a shared spatial extractor, one shared embedding function.

    Learner m embeds an image as `G(S(x) * A_m(S(x)))` with `A_m = A'_m o C` (docs/methods/abe.md).

    Args:
        backbone: `keras.Model`. Functional model from raw pixels to a 4-D feature map
            (`keras_dml.backbones.get`).
        num_learners: int. M. Defaults to `8` (the paper's ABE-8).
        embedding_dim: int. Ensemble size; each learner gets `embedding_dim / M`. Defaults to `512`.
        branch_point: str. Layer or split point where `S` ends. Defaults to `None`
            (`DEFAULT_BRANCHES`).
        trunk_end: str. Layer or split point where the trunk copy `C` ends. Defaults to `None`.
        use_trunk: bool. `False` applies `A'_m` to `S(x)` directly. Defaults to `True`.
        trunk_init: str. `"backbone"` (copy its weights) or `"random"`. Defaults to `"backbone"`.
        mask_activation: str. Activation of the masks. Defaults to `"sigmoid"`.
        embedding_bias: bool. Bias in the shared embedding layer. Defaults to `False`.
        pooling: str. `"avg"`, `"max"` or `"avgmax"`. Defaults to `"avg"`.
        dropout: float. Dropout before the embedding layer. Defaults to `0.0`.
        margin: float. Contrastive margin `m_c` (Eq. 10). Defaults to `1.0`.
        metric_loss: str or dict. A `keras_dml.losses` loss replacing Eq. 10. Defaults to `None`.
        lambda_div: float. Weight of the divergence loss (Eq. 8). Defaults to `1.0`.
        divergence_margin: float. `m_div` (Eq. 9). Defaults to `1.0`.
        divergence_pairs: str. `"self"` (the paper) or `"all"`. Defaults to `"self"`.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Examples:
    >>> import keras, keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = keras_dml.models.ABE(backbone, num_learners=4, embedding_dim=64)
    >>> model.compile(optimizer=keras.optimizers.SGD(1e-3, momentum=0.9))

    References:
        Kim, Goyal, Chawla, Lee, Kwon, "Attention-based Ensemble for Deep Metric Learning",
        ECCV 2018: Eq. 5 and 7 (model), Eq. 8-10 (loss), Sec. 4 and Fig. 3 (GoogLeNet cuts),
        Sec. 6.3 (no pooling in the attention module), Table 1 (parameters and FLOPs).
    """

    def __init__(
        self,
        backbone,
        num_learners=8,
        embedding_dim=512,
        branch_point=None,
        trunk_end=None,
        use_trunk=True,
        trunk_init="backbone",
        mask_activation="sigmoid",
        embedding_bias=False,
        **kwargs,
    ):
        # Plain settings first: the base `__init__` checks the shared arguments, then calls
        # `_build_parts`, which reads them (pooling, dropout and the loss arguments: `**kwargs`).
        self.branch_point = branch_point
        self.trunk_end = trunk_end
        self.use_trunk = bool(use_trunk)
        self.trunk_init = trunk_init
        self.mask_activation = mask_activation
        self.embedding_bias = bool(embedding_bias)
        kwargs.setdefault("lambda_div", 1.0)
        super().__init__(backbone, num_learners, embedding_dim, **kwargs)

    def _build_parts(self, backbone):
        """`S`, `G`, the trunk copy `C`, the masks `A'_m` and the shared embedding layer."""
        self.branch_point, self.trunk_end = resolve_branches(
            backbone, self.branch_point, self.trunk_end
        )
        self.spatial_extractor, self.global_extractor = split_backbone(backbone, self.branch_point)
        self.attention_trunk = None
        if self.use_trunk:
            self.attention_trunk = copy_segment(
                backbone,
                self.branch_point,
                self.trunk_end,
                name="attention_trunk",
                prefix="attention_trunk_",
                keep_resolution=True,
                init=self.trunk_init,
            )
        self.attention = AttentionBranch(
            self.num_learners,
            channels=int(self.spatial_extractor.outputs[0].shape[-1]),
            activation=self.mask_activation,
            name="attention_branch",
        )
        # float32 under a mixed-precision policy: the embedding is the model's output.
        self.embedding = keras.layers.Dense(
            self.learner_dims[0], use_bias=self.embedding_bias, dtype="float32", name="embedding"
        )

    def build(self, input_shape):
        spatial_shape = tuple(self.spatial_extractor.outputs[0].shape)
        trunk_shape = spatial_shape
        if self.attention_trunk is not None:
            trunk_shape = tuple(self.attention_trunk.outputs[0].shape)
        self.attention.build([spatial_shape, trunk_shape])
        self.embedding.build((None, int(self.global_extractor.outputs[0].shape[-1])))
        self.built = True

    # -- forward --------------------------------------------------------------------------------
    def attention_inputs(self, images, training=False):
        """`(S(x), C(S(x)))`: the spatial features and the trunk features."""
        features = self.spatial_extractor(images, training=training)
        if self.attention_trunk is None:
            return features, features
        return features, self.attention_trunk(features, training=training)

    def raw_learner_embeddings(self, images, training=False):
        """Learner embeddings before normalisation, `[N, M, d]`, with one batched call of G."""
        attended = self.attention(list(self.attention_inputs(images, training=training)))
        # Run-time h and w: a model built at (None, None, 3) takes any image size.
        _, _, height, width, channels = ops.shape(attended)
        stacked = ops.reshape(attended, (-1, height, width, channels))  # [N * M, h, w, c]
        pooled = self.pool(self.global_extractor(stacked, training=training))
        pooled = self.dropout_layer(pooled, training=training)
        raw = self.embedding(pooled)
        return ops.reshape(raw, (-1, self.num_learners, self.learner_dims[0]))

    def attention_maps(self, images, reduce="mean", batch_size=32):
        """Each learner's attention mask at input resolution, as numpy (Fig. 6).

        Args:
            images: float array `[N, H, W, 3]`, raw pixels.
            reduce: `"mean"` over mask channels, or channel indices. Defaults to `"mean"`.
            batch_size: int. Images per forward pass. Defaults to `32`.

        Returns:
            float32 array in (0, 1): `[N, M, H, W]`, or `[N, M, K, H, W]` for K channel indices.
        """
        channels = self.attention.channels
        if isinstance(reduce, str):
            if reduce != "mean":
                raise ValueError(f"`reduce` must be 'mean' or channel indices. Received: {reduce}")
            index = None
        else:
            index = np.atleast_1d(np.asarray(reduce, dtype="int64"))
            if index.size == 0 or index.min() < 0 or index.max() >= channels:
                raise ValueError(
                    f"Channel indices must be in [0, {channels}). Received: reduce={reduce!r}"
                )
        batches = []
        for start in range(0, len(images), batch_size):
            batch = ops.convert_to_tensor(images[start : start + batch_size], "float32")
            height, width = batch.shape[1:3]
            masks = self.attention(self.attention_inputs(batch)[1])  # [n, M, h, w, c]
            masks = masks[..., None] if index is None else ops.take(masks, index, axis=-1)
            if index is None:
                masks = ops.mean(masks, axis=-2)
            n, m, h, w, k = masks.shape
            flat = ops.reshape(ops.transpose(masks, (0, 1, 4, 2, 3)), (-1, h, w, 1))
            flat = ops.image.resize(flat, (height, width), interpolation="bilinear")
            batches.append(ops.convert_to_numpy(ops.reshape(flat, (n, m, k, height, width))))
        maps = np.concatenate(batches, axis=0).astype("float32")
        keep_axis = index is not None and np.ndim(reduce) > 0
        return maps if keep_axis else maps[:, :, 0]

    def learner_model(self, learner, target="features"):
        """Functional model of one learner for Grad-CAM: images -> raw embedding `[N, d]`.

        Args:
            learner: int. The learner m.
            target: str. Stage the `gradcam_target` layer marks: `"spatial"` (S(x)), `"attended"`
                (S(x) * A_m) or `"features"` (G's last feature map). Defaults to `"features"`.

        Returns:
            A functional `keras.Model` sharing this model's layers.
        """
        if target not in ("spatial", "attended", "features"):
            raise ValueError(
                f"`target` must be 'spatial', 'attended' or 'features'. Received: target={target!r}"
            )

        def global_part(features, mark):
            trunk = features if self.attention_trunk is None else self.attention_trunk(features)
            attended = self.attention([features, trunk], learner=int(learner))
            attended = mark(attended) if target == "attended" else attended
            return self.global_extractor(attended)

        return self._gradcam_model(learner, target, global_part, self.embedding)

    # -- serialization --------------------------------------------------------------------------
    def get_config(self):
        config = self._base_config()
        config.update(
            {
                "trunk_end": self.trunk_end,
                "use_trunk": self.use_trunk,
                "trunk_init": self.trunk_init,
                "mask_activation": self.mask_activation,
                "embedding_bias": self.embedding_bias,
            }
        )
        return config
