"""The `pml/<recipe>-keras-start` rows: PML trained from where a Keras user starts.

They measure what PyTorch's own start (Kaiming-uniform weights with non-zero biases, Adam's
epsilon 1e-8) is worth against keras-dml's (Glorot-uniform, zero biases, epsilon 1e-7), the
candidate cause of a loss trailing PML when loss values and gradients agree
(`tests/losses/test_pml_gradients.py`). Needs torch and PML: skipped without them.
"""

import json

import numpy as np
import pytest

from tests.benchmarks.test_torch_divide_and_conquer import BUDGET, small_backbone, tiny_splits
from tests.support.helpers import benchmark_script

torch = pytest.importorskip("torch")
pytest.importorskip("pytorch_metric_learning")


def reference():
    return benchmark_script("accuracy.torch_reference")


def test_keras_start_copies_the_keras_backbone_and_a_keras_dense_initialisation():
    module = reference()
    backbone = small_backbone()
    translated, channels = module.translate_backbone(backbone)
    net = module.EmbeddingNet(translated, channels, 16)
    kaiming_bound = 1.0 / np.sqrt(channels)  # PyTorch's Linear draws within it
    assert np.abs(net.head.weight.detach().numpy()).max() <= kaiming_bound

    module.keras_start(backbone, net)

    first_conv = next(layer for layer in backbone.layers if hasattr(layer, "kernel"))
    conv = next(m for m in net.backbone if isinstance(m, torch.nn.Conv2d))
    np.testing.assert_array_equal(
        conv.weight.detach().numpy(), np.asarray(first_conv.kernel).transpose(3, 2, 0, 1)
    )
    weight = net.head.weight.detach().numpy()
    glorot_bound = np.sqrt(6.0 / (channels + 16))
    assert np.abs(weight).max() <= glorot_bound
    assert np.abs(weight).max() > kaiming_bound  # Glorot's wider range, not PyTorch's draw
    assert not net.head.bias.detach().numpy().any()  # Keras's zero bias


def test_each_start_trains_with_its_adam_epsilon(monkeypatch):
    module = reference()
    train = tiny_splits()["train"]
    epsilons = []
    adam = torch.optim.Adam

    def recorded(params, **kwargs):
        epsilons.append(kwargs.get("eps"))
        return adam(params, **kwargs)

    monkeypatch.setattr(torch.optim, "Adam", recorded)
    keras_starts = []
    copy = module.keras_start
    monkeypatch.setattr(module, "keras_start", lambda *a: keras_starts.append(1) or copy(*a))
    budget = {**BUDGET, "epochs": 1}
    images = np.asarray(train.images)
    for start in ("keras", "pytorch", "keras-epsilon"):
        embeddings, _ = module.train_and_embed(
            "circle", small_backbone(), images, train.labels, images[:4], budget, 0, start=start
        )
        assert embeddings.shape == (4, 16) and np.isfinite(embeddings).all()
    assert epsilons == [1e-7, 1e-8, 1e-7]
    assert len(keras_starts) == 1  # the Keras initialisation for the `keras` start only
    with pytest.raises(ValueError, match="`start` must be one of"):
        module.train_and_embed(
            "circle", small_backbone(), images, train.labels, images[:4], budget, 0, start="tf"
        )


def test_run_records_a_keras_start_row_with_its_start(tmp_path, monkeypatch):
    run = benchmark_script("accuracy.run")
    module = reference()
    import keras_dml.training

    monkeypatch.setattr(keras_dml.training, "load_splits", lambda config: tiny_splits())
    starts = []
    train = module.train_and_embed

    def recorded(*args, **kwargs):
        starts.append(kwargs["start"])
        return train(*args, **kwargs)

    monkeypatch.setattr(module, "train_and_embed", recorded)
    sets = ["epochs=1", "batch_size=8", "m_per_class=2", "embedding_dim=16", "backbone=convnet"]
    out = tmp_path / "acc"
    run.main(
        ["--rows", "pml/circle-keras-start,pml/circle", "--seeds", "0", "--output", str(out)]
        + [item for s in sets for item in ("--set", s)]
    )
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert starts == ["pytorch", "keras"]  # table order
    assert {r["row"]: r["settings"] for r in records} == {
        "pml/circle-keras-start": {"backbone": "convnet", "recipe": "circle", "start": "keras"},
        "pml/circle": {"backbone": "convnet", "recipe": "circle"},
    }


def test_every_start_a_row_names_is_one_train_and_embed_takes():
    from benchmarks.accuracy.rows import PML_STARTS

    starts = reference().STARTS
    assert set(PML_STARTS.values()) | {"pytorch"} == set(starts)
    assert starts["pytorch"][1] == 1e-8 and starts["keras"][1] == 1e-7  # the two defaults
