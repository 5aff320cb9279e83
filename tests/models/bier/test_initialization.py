import numpy as np
import pytest

from keras_dml.methods.bier.initialization import initialize_bier_embedding
from keras_dml.models.bier import BIER
from tests.models.bier.test_model import tiny_backbone
from tests.support.backend_utils import to_numpy
from tests.support.helpers import tiny_images


def _group_correlation(model, features):
    raw = [features @ to_numpy(h.kernel) for h in model.heads]
    corr = np.corrcoef(np.concatenate(raw, axis=1), rowvar=False)
    d0 = model.learner_dims[0]
    return np.nanmean(np.abs(corr[:d0, d0:]))


@pytest.mark.parametrize("diversity", ["activation", "adversarial"])
def test_initialisation_decorrelates_groups_and_keeps_unit_norms(diversity):
    model = BIER(tiny_backbone(), group_sizes=(4, 6), regressor_units=16)
    images = tiny_images(32)
    features = to_numpy(model.features(images))
    before_kernels = [to_numpy(h.kernel).copy() for h in model.heads]
    backbone_before = [w.copy() for w in model.backbone.get_weights()]
    history = initialize_bier_embedding(
        model, features, diversity=diversity, epochs=30, batch_size=16, learning_rate=1e-2
    )
    assert all(np.isfinite(history)) and history[-1] < history[0]
    assert any(not np.allclose(a, to_numpy(h.kernel)) for a, h in zip(before_kernels, model.heads))
    for a, b in zip(backbone_before, model.backbone.get_weights()):
        np.testing.assert_array_equal(a, b)
    norms = np.concatenate([np.sum(to_numpy(h.kernel) ** 2, axis=0) for h in model.heads])
    np.testing.assert_allclose(norms, 1.0, atol=0.1)
    if diversity == "activation":
        energies = [np.sum((features @ to_numpy(h.kernel)) ** 2, 1) for h in model.heads]
        start = [np.sum((features @ k) ** 2, 1) for k in before_kernels]
        assert np.mean(energies[0] * energies[1]) < np.mean(start[0] * start[1])


def test_initialisation_accepts_images_and_checks_inputs():
    model = BIER(tiny_backbone(), group_sizes=(4, 6))
    assert len(initialize_bier_embedding(model, tiny_images(8), epochs=2, batch_size=4)) == 2
    with pytest.raises(ValueError, match="columns"):
        initialize_bier_embedding(model, np.zeros((4, 3), "float32"))
    with pytest.raises(ValueError, match="diversity"):
        initialize_bier_embedding(model, tiny_images(4), diversity="other")
