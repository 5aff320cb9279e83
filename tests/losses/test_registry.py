"""`keras_dml.losses.get`: names, config dicts, Keras configs and instances."""

import keras
import pytest

from keras_dml import losses


@pytest.mark.parametrize(
    "name, cls",
    [
        ("contrastive", losses.ContrastiveLoss),
        ("triplet", losses.TripletLoss),
        ("margin", losses.MarginLoss),
        ("learnable-margin", losses.LearnableMarginLoss),
        ("Binomial_Deviance", losses.BinomialDevianceLoss),
        ("multi-similarity", losses.MultiSimilarityLoss),
    ],
)
def test_get_resolves_names(name, cls):
    assert type(losses.get(name)) is cls


def test_get_passes_arguments_and_config_dicts():
    loss = losses.get("triplet", margin=0.5, mining="batch-hard")
    assert (loss.margin, loss.mining) == (0.5, "batch-hard")
    loss = losses.get({"name": "margin", "beta": 1.0}, margin=0.1)
    assert (loss.beta, loss.margin) == (1.0, 0.1)
    layer = losses.get("proxy_nca", num_classes=5, embedding_dim=3)
    assert tuple(layer.proxies.shape) == (5, 3)


def test_get_accepts_keras_configs_and_instances():
    original = losses.BinomialDevianceLoss(cost=10.0)
    restored = losses.get(keras.saving.serialize_keras_object(original))
    assert isinstance(restored, losses.BinomialDevianceLoss) and restored.cost == 10.0
    assert losses.get(original) is original


def test_get_errors_list_the_known_names():
    with pytest.raises(ValueError, match="Known losses: .*multi_similarity"):
        losses.get("no_such_loss")
    with pytest.raises(ValueError, match="'name'"):
        losses.get({"margin": 0.1})
    with pytest.raises(ValueError, match="Cannot interpret"):
        losses.get(3)
    with pytest.raises(ValueError, match="instance"):
        losses.get(losses.TripletLoss(), margin=0.1)


def test_register_loss_lists_and_suggests_names():
    @losses.register_loss("toy-registered")
    class ToyRegisteredLoss(losses.ContrastiveLoss):
        """A contrastive loss under another name."""

    try:
        assert "toy_registered" in losses.list_losses()
        assert type(losses.get("toy_registered")) is ToyRegisteredLoss
        assert losses.list_losses(verbose=True)["toy_registered"].startswith("A contrastive")
        with pytest.raises(ValueError, match="registered already"):
            losses.register_loss("toy_registered")(losses.TripletLoss)
    finally:
        losses.LOSSES.unregister("toy_registered")
    with pytest.raises(ValueError, match="Did you mean 'triplet'"):
        losses.get("triplett")
