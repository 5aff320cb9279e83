"""The single-embedding baseline and the ensemble base class."""

import keras
import numpy as np
import pytest

from keras_dml import backbones, losses
from keras_dml.models import EmbeddingModel
from keras_dml.models.embedding_model import resolve_learner_dims
from tests.support.helpers import check_model, roundtrip, tiny_images, tiny_labels


def convnet(size=32):
    keras.utils.set_random_seed(0)
    return backbones.get("convnet", input_shape=(size, size, 3))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"embedding_dim": 16},
        {"embedding_dim": 24, "num_learners": 3, "pooling": "avgmax"},
        {"learner_dims": (4, 12), "learner_weights": (0.5, 2.0), "pooling": "max", "dropout": 0.1},
    ],
)
def test_check_model(kwargs):
    model = EmbeddingModel(convnet(), **kwargs)
    check_model(model, tiny_images(), tiny_labels(), loss=losses.ContrastiveLoss())


def test_output_is_weighted_concatenation_of_normalised_learners():
    model = EmbeddingModel(convnet(), learner_dims=(4, 12), learner_weights=(0.5, 2.0))
    images = tiny_images(4)
    output = keras.ops.convert_to_numpy(model(images))
    learners = [keras.ops.convert_to_numpy(e) for e in model.learner_embeddings(images)]
    np.testing.assert_allclose(output[:, :4], 0.5 * learners[0], atol=1e-6)
    np.testing.assert_allclose(output[:, 4:], 2.0 * learners[1], atol=1e-6)
    assert model.learner_slices() == [(0, 4), (4, 16)]
    np.testing.assert_allclose(np.linalg.norm(output[:, 4:], axis=1), 2.0, atol=1e-5)


def test_preprocessing_is_inside_the_model():
    """Raw pixels in: the backbone's own normalisation runs inside, so uint8 and float agree."""
    model = EmbeddingModel(convnet(), embedding_dim=8)
    images = np.random.default_rng(0).integers(0, 256, (3, 32, 32, 3)).astype("uint8")
    from_uint8 = keras.ops.convert_to_numpy(model(images.astype("float32")))
    assert model.backbone.layers[1].__class__.__name__ == "ImageNormalization"
    rescaled = keras.ops.convert_to_numpy(model(images.astype("float32") / 255.0))
    assert not np.allclose(from_uint8, rescaled), "the model must expect [0, 255] pixels"


def test_separate_heads_per_learner():
    model = EmbeddingModel(convnet(), embedding_dim=12, num_learners=3)
    assert [h.units for h in model.heads] == [4, 4, 4]
    assert len({id(h.kernel) for h in model.heads}) == 3


def test_fit_on_sampler_batches_with_a_trainable_loss_layer():
    """A learnable margin loss owned by a subclass trains with the model (losses as layers)."""

    class WithLearnableMargin(EmbeddingModel):
        def build(self, input_shape):
            # EmbeddingModel builds itself at the end of __init__: extra state goes here.
            self.margin_loss = losses.LearnableMarginLoss()
            super().build(input_shape)

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            loss, _ = self.margin_loss(y, y_pred, return_count=True)
            return loss

    model = WithLearnableMargin(convnet(), embedding_dim=8)
    model.compile(optimizer=keras.optimizers.Adam(1e-2))
    beta_before = keras.ops.convert_to_numpy(model.margin_loss.trainable_weights[0]).copy()
    model.fit(tiny_images(16), tiny_labels(16), batch_size=16, epochs=2, verbose=0)
    beta_after = keras.ops.convert_to_numpy(model.margin_loss.trainable_weights[0])
    assert not np.allclose(beta_before, beta_after)


def test_roundtrip_keeps_learner_structure():
    model = EmbeddingModel(convnet(), learner_dims=(3, 5), learner_weights=(1.0, 0.5))
    reloaded = roundtrip(model)
    assert reloaded.learner_dims == (3, 5) and reloaded.learner_weights == (1.0, 0.5)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"embedding_dim": 2, "num_learners": 3}, "at least `num_learners`"),
        ({"num_learners": 0}, "num_learners"),
        ({"learner_dims": (4, 0)}, "positive"),
        ({"learner_dims": (4, 4), "learner_weights": (1.0,)}, "one weight per learner"),
        ({"pooling": "median"}, "pooling"),
        ({"dropout": 1.0}, "dropout"),
    ],
)
def test_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        EmbeddingModel(convnet(), **kwargs)


def test_backbone_must_be_a_feature_map_model():
    inputs = keras.Input((32, 32, 3))
    flat = keras.Model(inputs, keras.layers.GlobalAveragePooling2D()(inputs))
    with pytest.raises(ValueError, match="4-D feature map"):
        EmbeddingModel(flat)
    with pytest.raises(ValueError, match="functional keras.Model"):
        EmbeddingModel("convnet")


def test_resolve_learner_dims():
    assert resolve_learner_dims(128, 4) == (32, 32, 32, 32)
    assert resolve_learner_dims(0, 0, learner_dims=[96, 160, 256]) == (96, 160, 256)


def tiny_backbone():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((32, 32, 3))
    x = keras.layers.Conv2D(8, 3, strides=4, activation="relu")(inputs)
    return keras.Model(inputs, x)


@pytest.mark.parametrize(
    "make_loss",
    [lambda: losses.TripletLoss(mining="random", seed=3), lambda: losses.MarginLoss(seed=3)],
    ids=["triplet_random", "margin"],
)
def test_a_random_loss_draws_anew_at_every_step(make_loss):
    """The compiled loss's `SeedGenerator` advances in `fit` on every backend.

    JAX runs a step as a pure function of the model's variables: a generator the model did not
    track stayed a constant there, and every step drew the same negatives.
    """
    model = EmbeddingModel(tiny_backbone(), embedding_dim=8)
    loss = make_loss()
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss=loss)  # the weights stay put
    history = model.fit(tiny_images(8), tiny_labels(8), batch_size=8, epochs=3, verbose=0)
    state = loss.seed_generator.state
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(state), [3, 3])  # one draw a step
    assert len(set(history.history["loss"])) == 3  # same weights and batch, other negatives
    assert any(v is state for v in model.non_trainable_variables)
    model.compile(optimizer="sgd", loss=losses.ContrastiveLoss())
    assert not any(v is state for v in model.non_trainable_variables)
