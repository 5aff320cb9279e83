"""Margin loss with a learnable beta, as a layer the model owns."""

import keras
from keras import ops

from keras_dml.losses.margin import check_margin_arguments, margin_loss
from keras_dml.losses.registry import register_loss
from keras_dml.miners.aliases import margin_miner
from keras_dml.pairs.distances import one_hot_in_range
from keras_dml.utils.argument_config import ArgumentConfig


@register_loss("learnable_margin")
@keras.saving.register_keras_serializable(package="keras_dml")
class LearnableMarginLoss(ArgumentConfig, keras.layers.Layer):
    """Margin loss whose boundary beta is trained with the model (global or per class).

    Called as `layer(labels, embeddings, return_count=False)`; arguments as `margin_loss`'s
    (`seed` an int), plus:

    Args:
        num_classes: optional int. `None` learns one global beta, an int one beta per class
            (labels outside `[0, num_classes)` get beta 0). Defaults to `None`.
        initial_beta: float. Initial value of every beta. Defaults to `1.2`.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.

    References:
        Wu et al., ICCV 2017, Sec. 5 (learnable beta); Zheng et al., DCML, CVPR 2021, Eq. (9).
    """

    def __init__(
        self,
        num_classes=None,
        initial_beta=1.2,
        margin=0.2,
        nu=0.0,
        sampling=None,
        cutoff=None,
        nonzero_loss_cutoff=None,
        normalize_embeddings=True,
        normalize_by="nonzero",
        seed=None,
        miner=None,
        **kwargs,
    ):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        if num_classes is not None and int(num_classes) < 1:
            raise ValueError(
                f"`num_classes` must be None (global beta) or >= 1. Received: "
                f"num_classes={num_classes}"
            )
        if nu < 0:
            raise ValueError(f"`nu` must be >= 0. Received: nu={nu}")
        check_margin_arguments(margin, normalize_by)
        self.miner = margin_miner(sampling, cutoff, nonzero_loss_cutoff, miner)
        self.num_classes = None if num_classes is None else int(num_classes)
        self.initial_beta = float(initial_beta)
        self.margin = float(margin)
        self.nu = float(nu)
        self.normalize_embeddings = bool(normalize_embeddings)
        self.normalize_by = normalize_by
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)
        # Created now, so an owning model lists them before `fit` builds the optimizer.
        self.build()

    def build(self, labels_shape=None, embeddings_shape=None):
        shape = () if self.num_classes is None else (self.num_classes,)
        self.beta = self.add_weight(
            name="beta",
            shape=shape,
            initializer=keras.initializers.Constant(self.initial_beta),
            dtype="float32",
            trainable=True,
            autocast=False,
        )

    def beta_for(self, labels):
        """Per-sample betas `[B]` (float32) for integer `labels`."""
        labels = ops.reshape(ops.cast(labels, "int32"), (-1,))
        if self.num_classes is None:
            return self.beta * ops.ones(ops.shape(labels), dtype="float32")
        one_hot = one_hot_in_range(labels, self.num_classes)
        return ops.matmul(one_hot, ops.expand_dims(self.beta, 1))[:, 0]

    def call(self, labels, embeddings, return_count=False):
        return margin_loss(
            labels,
            embeddings,
            beta=self.beta_for(labels),
            margin=self.margin,
            nu=self.nu,
            miner=self.miner,
            normalize_embeddings=self.normalize_embeddings,
            normalize_by=self.normalize_by,
            seed=self.seed_generator,
            return_count=return_count,
        )

    def compute_output_shape(self, labels_shape, embeddings_shape=None):
        return ()
