"""`SplitEnsembleBase`: the constructor ABE and M-heads share (defaults, checks, build order)."""

import keras
import pytest

from keras_dml import backbones
from keras_dml.models.abe import ABE
from keras_dml.models.mheads import MHeads


def convnet():
    keras.utils.set_random_seed(0)
    return backbones.get("convnet", input_shape=(32, 32, 3))


def test_each_method_keeps_its_own_lambda_div_default():
    abe = ABE(convnet(), num_learners=2, embedding_dim=8)
    mheads = MHeads(convnet(), num_learners=2, embedding_dim=8)
    assert abe.lambda_div == 1.0 and abe.uses_divergence
    assert mheads.lambda_div == 0.0 and not mheads.uses_divergence
    assert MHeads(convnet(), 2, 8, lambda_div=0.5).uses_divergence


@pytest.mark.parametrize("cls", [ABE, MHeads])
def test_shared_arguments_reach_the_model(cls):
    model = cls(
        convnet(), 2, 8, pooling="max", dropout=0.25, margin=0.5, divergence_pairs="all", name="m"
    )
    assert (model.pooling, model.dropout, model.margin) == ("max", 0.25, 0.5)
    assert (model.divergence_pairs, model.name, model.learner_dims) == ("all", "m", (4, 4))
    assert model.built and model(keras.ops.zeros((1, 32, 32, 3))).shape == (1, 8)


@pytest.mark.parametrize("cls", [ABE, MHeads])
def test_shared_checks_name_the_argument(cls):
    with pytest.raises(ValueError, match="divisible by `num_learners`"):
        cls(convnet(), num_learners=3, embedding_dim=8)
    with pytest.raises(ValueError, match="divergence_pairs"):
        cls(convnet(), num_learners=2, embedding_dim=8, divergence_pairs="none")
    with pytest.raises(ValueError, match="lambda_div"):
        cls(convnet(), num_learners=2, embedding_dim=8, lambda_div=-1.0)
