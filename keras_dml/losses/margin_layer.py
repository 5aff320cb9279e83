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

    A `keras.losses.Loss` cannot hold weights, so a loss with trainable parameters is a layer:
    the model creates it in `__init__` (its weights exist immediately, so they are in
    `model.trainable_weights` before the optimizer is built), and calls it in `compute_loss` /
    `train_step`. `call(labels, embeddings)` returns the scalar loss; the layer also owns the
    sampler's `SeedGenerator`, whose state is saved with the model.

    ```python
    class MyModel(keras.Model):
        def __init__(self, num_classes, **kwargs):
            super().__init__(**kwargs)
            self.embed = keras.layers.Dense(64)
            self.margin = keras_dml.losses.LearnableMarginLoss(num_classes=num_classes, nu=0.0)

        def call(self, x):
            return self.embed(x)

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            loss, num_pairs = self.margin(y, y_pred, return_count=True)
            return loss
    ```

    Betas usually need a larger learning rate than the network (DCML: 5e-4 vs 1e-5).

    Args:
        num_classes: optional int. `None` learns one global beta; an int learns one beta per
            class (labels must then be in `[0, num_classes)`; other labels get beta 0).
            Defaults to `None`.
        initial_beta: float. Initial value of every beta. Defaults to `1.2`.
        margin: float. Margin alpha. Defaults to `0.2`.
        nu: float. Weight of the beta regulariser. Defaults to `0.0`.
        sampling: `None`, `"distance_weighted"` or `"closest"`: the miner by its former
            option name. Defaults to `None` (`"distance_weighted"` unless `miner` is given).
        cutoff: float. The sampler's lower cutoff. Defaults to `None` (`0.5`).
        nonzero_loss_cutoff: float. Distance-weighted sampling's upper cutoff. Defaults to
            `None` (`1.4`).
        normalize_embeddings: bool. Defaults to `True`.
        normalize_by: `"nonzero"` or `"pairs"`. Defaults to `"nonzero"`.
        seed: optional int. Seed of the sampler's generator.
        miner: optional `keras_dml.miners.TripletMiner`, registered name or config dict,
            instead of `sampling` and its cutoffs. Defaults to `None`.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.

    Call arguments:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings.
        return_count: bool. Also return the int32 number of selected pairs. Defaults to `False`.

    Returns:
        float32 scalar loss, or `(loss, num_valid)`.

    Examples:
    >>> margin = LearnableMarginLoss(num_classes=100)
    >>> loss = margin(labels, embeddings)

    References:
        Wu et al., "Sampling Matters in Deep Embedding Learning", ICCV 2017, Sec. 5 (learnable
        beta^(0) and beta^(class) with regulariser nu); Zheng et al., DCML, CVPR 2021, Eq. (9).
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
        # The weights do not depend on the input shape: create them now so a model owning this
        # layer lists them in `trainable_weights` before `fit` builds the optimizer.
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
