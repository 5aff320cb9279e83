import keras
import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.models.abe import ABE
from keras_dml.models.attention.objective import abe_contrastive_loss, divergence_loss
from keras_dml.models.embedding_model import l2_normalize
from keras_dml.models.mheads import MHeads
from tests.support.backend_utils import gradients
from tests.support.helpers import check_model, tiny_images, tiny_labels


def convnet(seed=0):
    keras.utils.set_random_seed(seed)
    return backbones.get("convnet", input_shape=(32, 32, 3))


def numpy(x):
    return keras.ops.convert_to_numpy(x)


@pytest.mark.parametrize("cls", [ABE, MHeads])
def test_check_model(cls):
    model = cls(convnet(), num_learners=2, embedding_dim=16)
    reloaded = check_model(model, tiny_images(8), tiny_labels(8))
    config, reloaded_config = model.get_config(), reloaded.get_config()
    config.pop("backbone"), reloaded_config.pop("backbone")
    assert reloaded_config == config
    assert model.learner_dims == (8, 8)


def test_fit_reports_every_loss_term():
    model = ABE(convnet(), num_learners=2, embedding_dim=16)
    model.compile(optimizer=keras.optimizers.SGD(1e-3, momentum=0.9))
    history = model.fit(tiny_images(8), tiny_labels(8), batch_size=8, verbose=0).history
    for name in ("loss", "metric_loss", "learner_0_loss", "learner_1_loss", "divergence_loss"):
        assert np.isfinite(history[name][0]), name
    expected = history["metric_loss"][0] + history["divergence_loss"][0]
    np.testing.assert_allclose(history["loss"][0], expected, rtol=1e-5)


def test_abe1_has_no_divergence_loss():
    model = ABE(convnet(), num_learners=1, embedding_dim=8)
    assert not model.uses_divergence
    assert "divergence_loss" not in [t.name for t in model.loss_trackers]


def test_masks_in_unit_interval_with_spatial_shape():
    model = ABE(convnet(), num_learners=3, embedding_dim=12)
    features, trunk = model.attention_inputs(tiny_images(4))
    masks = numpy(model.attention(trunk))
    assert masks.shape == (4, 3, *features.shape[1:])  # S(x) of convnet at block2: 8x8x64
    assert masks.shape[2:] == (8, 8, 64)
    assert masks.min() > 0.0 and masks.max() < 1.0
    maps = model.attention_maps(tiny_images(4))
    assert maps.shape == (4, 3, 32, 32) and maps.min() > 0.0 and maps.max() < 1.0
    assert model.attention_maps(tiny_images(4), reduce=[0, 5]).shape == (4, 3, 2, 32, 32)


def test_all_ones_mask_reduces_to_the_plain_backbone():
    backbone = convnet()
    model = ABE(backbone, num_learners=1, embedding_dim=8)
    kernel, bias = model.attention.kernels[0], model.attention.biases[0]
    kernel.assign(np.zeros(kernel.shape, "float32"))
    bias.assign(np.full(bias.shape, 50.0, "float32"))  # sigmoid(50) == 1 in float32
    images = tiny_images(4)
    expected = l2_normalize(model.embedding(keras.ops.mean(backbone(images), axis=(1, 2))))
    np.testing.assert_allclose(numpy(model(images)), numpy(expected), atol=1e-5)


def test_batched_global_function_matches_per_learner_calls():
    model = ABE(convnet(), num_learners=3, embedding_dim=12)
    images = tiny_images(4)
    raw = numpy(model.raw_learner_embeddings(images))
    for m in range(3):
        np.testing.assert_allclose(numpy(model.learner_model(m)(images)), raw[:, m], atol=1e-5)


def test_global_function_is_shared():
    def params(cls, m):
        return cls(convnet(), num_learners=m, embedding_dim=8 * m).count_params()

    abe = {m: params(ABE, m) for m in (1, 2, 4)}
    # Trunk output (block3 copy) has 128 channels, S(x) 64: each module is a 128x64 1x1 conv.
    module = 128 * 64 + 64
    assert abe[2] - abe[1] == module and abe[4] - abe[1] == 3 * module
    heads = {m: params(MHeads, m) for m in (1, 2)}
    assert heads[2] - heads[1] > 10 * module  # a whole copy of G per extra head
    model = ABE(convnet(), num_learners=2, embedding_dim=16)
    ids = {id(v) for v in model.global_extractor.weights}
    assert ids <= {id(v) for v in model.backbone.weights}  # G is the backbone's own layers
    assert not ids & {id(v) for v in model.attention_trunk.weights}  # the trunk is a copy


def test_trunk_copy_starts_from_backbone_weights():
    model = ABE(convnet(), num_learners=2, embedding_dim=16)
    original = model.backbone.get_layer("block3_conv").kernel
    copy = model.attention_trunk.get_layer("attention_trunk_block3_conv").kernel
    np.testing.assert_allclose(numpy(copy), numpy(original))
    random = ABE(convnet(), num_learners=2, embedding_dim=16, trunk_init="random")
    copy = random.attention_trunk.get_layer("attention_trunk_block3_conv").kernel
    assert not np.allclose(numpy(copy), numpy(random.backbone.get_layer("block3_conv").kernel))


def _self_similarity(model, images):
    a, b = model.learner_embeddings(images)
    return float(np.mean(np.sum(numpy(a) * numpy(b), axis=1)))


def test_divergence_loss_pushes_self_pairs_apart():
    model = ABE(convnet(), num_learners=2, embedding_dim=16)
    images = tiny_images(8)
    before = _self_similarity(model, images)
    optimizer = keras.optimizers.Adam(1e-2)
    for _ in range(5):
        grads = gradients(
            lambda *_: divergence_loss(model.learner_embeddings(images, training=False)),
            model.trainable_variables,
        )
        optimizer.apply([keras.ops.convert_to_tensor(g) for g in grads], model.trainable_variables)
    assert _self_similarity(model, images) < before - 0.05


def test_contrastive_loss_matches_eq10_loop():
    rng = np.random.default_rng(0)
    labels = np.array([0, 0, 1, 1, 2])
    e = rng.standard_normal((5, 4)).astype("float32")
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    terms = []
    for i in range(5):
        for j in range(5):
            if i != j:
                d2 = np.sum((e[i] - e[j]) ** 2)
                terms.append(d2 if labels[i] == labels[j] else max(0.0, 1.0 - d2))
    np.testing.assert_allclose(float(abe_contrastive_loss(labels, e)), np.mean(terms), rtol=1e-5)


@pytest.mark.backend_semantics
@pytest.mark.parametrize("pairs", ["self", "all"])
def test_divergence_loss_matches_eq9_loop(pairs):
    rng = np.random.default_rng(1)
    learners = [rng.standard_normal((4, 3)).astype("float32") * 0.3 for _ in range(3)]
    means = []
    for p in range(3):
        for q in range(p + 1, 3):
            rows = [
                max(0.0, 1.0 - np.sum((learners[p][i] - learners[q][j]) ** 2))
                for i in range(4)
                for j in range(4)
                if pairs == "all" or i == j
            ]
            means.append(np.mean(rows))
    value = float(divergence_loss(learners, pairs=pairs))
    np.testing.assert_allclose(value, np.mean(means), rtol=1e-5)


def test_mheads_one_head_is_the_baseline():
    backbone = convnet()
    model = MHeads(backbone, num_learners=1, embedding_dim=8)
    images = tiny_images(4)
    expected = l2_normalize(model.heads[0](keras.ops.mean(backbone(images), axis=(1, 2))))
    np.testing.assert_allclose(numpy(model(images)), numpy(expected), atol=1e-5)


def test_argument_errors():
    with pytest.raises(ValueError, match="divisible"):
        ABE(convnet(), num_learners=3, embedding_dim=16)
    with pytest.raises(ValueError, match="branch point"):
        inputs = keras.Input((32, 32, 3))
        ABE(keras.Model(inputs, keras.layers.Conv2D(4, 3)(inputs)), num_learners=2)
    with pytest.raises(ValueError, match="loss"):
        ABE(convnet(), num_learners=2, embedding_dim=16).compile("adam", loss="mse")
    with pytest.raises(ValueError, match="divergence_pairs"):
        ABE(convnet(), num_learners=2, embedding_dim=16, divergence_pairs="some")


def test_metric_loss_variant():
    model = ABE(
        convnet(),
        num_learners=2,
        embedding_dim=16,
        metric_loss={"name": "contrastive", "margin": 0.5},
        divergence_margin=0.2,
        lambda_div=0.05,
    )
    terms = model.loss_terms(tiny_labels(8), model(tiny_images(8)))
    assert np.isfinite(float(terms["loss"]))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["googlenet", "resnet50"])
def test_default_branches_of_large_backbones(name):
    backbone = backbones.get(name, input_shape=(64, 64, 3))
    model = ABE(backbone, num_learners=2, embedding_dim=16)
    features = model.spatial_extractor.outputs[0].shape
    trunk = model.attention_trunk.outputs[0].shape
    assert features[1:3] == trunk[1:3]  # the trunk copy keeps S's resolution
    assert model(tiny_images(2, size=64)).shape == (2, 16)


def test_every_registered_backbone_has_default_cuts():
    """ABE (and M-heads) build on every registered backbone without the user naming cuts."""
    from keras_dml.backbones import list_backbones
    from keras_dml.models.attention.branching import DEFAULT_BRANCHES

    missing = sorted(set(list_backbones()) - set(DEFAULT_BRANCHES))
    assert not missing, f"no default ABE cuts for {missing}"


def test_abe_cuts_vgg_small_after_block2_and_mheads_after_block1():
    """ABE's masks act on block2's output (8x8 at 32 px, stride 4) and G is block3 alone: the
    cut that is level with the baseline (docs/benchmarks.md). M-heads keep the block1 cut their
    rows were measured with (16x16), each head owning blocks 2-3."""
    keras.utils.set_random_seed(0)
    backbone = backbones.get("vgg_small", input_shape=(32, 32, 1), width=8)
    model = ABE(backbone, num_learners=2, embedding_dim=8)
    assert (model.branch_point, model.trunk_end) == ("block2", "block3")
    assert tuple(model.spatial_extractor.outputs[0].shape[1:]) == (8, 8, 16)  # 2 x width
    assert tuple(model.attention_trunk.outputs[0].shape[1:3]) == (8, 8)  # no pooling in C
    assert numpy(model(np.zeros((2, 32, 32, 1), "float32"))).shape == (2, 8)
    heads = MHeads(
        backbones.get("vgg_small", input_shape=(32, 32, 1), width=8),
        num_learners=2,
        embedding_dim=8,
    )
    assert heads.branch_point == "block1"
    assert tuple(heads.spatial_extractor.outputs[0].shape[1:]) == (16, 16, 8)
