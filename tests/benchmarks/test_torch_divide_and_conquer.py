"""`benchmarks/accuracy/torch_divide_and_conquer.py`: D&C in plain PyTorch (the
`pml/dc-normalized_softmax` row), the pretrained backbone's weights copied into the translated
backbone, and the row's place in `run.py` and the table.

Needs torch and pytorch-metric-learning (the benchmark's own dependencies): skipped without them.
"""

import json

import numpy as np
import pytest

from tests.support.helpers import benchmark_script

torch = pytest.importorskip("torch")
pytest.importorskip("pytorch_metric_learning")

ROW = "pml/dc-normalized_softmax"
# 8 classes x 6 images: 48 // 8 = 6 batches an epoch; 4 learners of 4 dimensions.
BUDGET = {
    "epochs": 3,
    "batch_size": 8,
    "m_per_class": 2,
    "learning_rate": 1e-3,
    "embedding_dim": 16,
    "image_size": 32,
    "backbone": "vgg_small",
}


def dc_module():
    return benchmark_script("accuracy.torch_divide_and_conquer")


def small_backbone(**options):
    from keras_dml import backbones

    return backbones.get("vgg_small", input_shape=(32, 32, 3), width=8, **options)


def randomize_batchnorm(backbone, seed=0):
    """Moves every BatchNormalization off its initial identity (gamma 1, beta 0, mean 0, var 1),
    so that copying them is tested."""
    rng = np.random.default_rng(seed)
    for layer in backbone.layers:
        if type(layer).__name__ == "BatchNormalization":
            size = layer.gamma.shape
            layer.gamma.assign(rng.uniform(0.5, 1.5, size).astype("float32"))
            layer.beta.assign(rng.normal(0, 0.5, size).astype("float32"))
            layer.moving_mean.assign(rng.normal(0, 0.5, size).astype("float32"))
            layer.moving_variance.assign(rng.uniform(0.5, 2.0, size).astype("float32"))


def test_copied_weights_give_the_keras_backbones_outputs(tmp_path):
    import keras

    reference = benchmark_script("accuracy.torch_reference")
    source = small_backbone()
    randomize_batchnorm(source)
    path = str(tmp_path / "backbone.weights.h5")
    source.save_weights(path)
    images = np.random.default_rng(1).uniform(0, 255, (4, 32, 32, 3)).astype("float32")
    expected = keras.ops.convert_to_numpy(source(images, training=False)).transpose(0, 3, 1, 2)

    # From the backbone's own weights, and (the pretrained regime) from its weights file.
    module, _ = reference.translate_backbone(source)
    reference.copy_backbone_weights(source, module)
    loaded, _ = reference.translate_with_weights(small_backbone(), path)
    for translated in (module, loaded):
        with torch.no_grad():
            got = translated.eval()(torch.from_numpy(images.transpose(0, 3, 1, 2).copy()))
        np.testing.assert_allclose(got.numpy(), expected, atol=1e-4, rtol=1e-4)
    # Without the copy the outputs differ (the comparison is not vacuous).
    fresh, _ = reference.translate_backbone(source)
    with torch.no_grad():
        other = fresh.eval()(torch.from_numpy(images.transpose(0, 3, 1, 2).copy())).numpy()
    assert not np.allclose(other, expected, atol=1e-2)


def test_matching_keeps_each_learner_on_its_cluster_when_the_clusters_are_permuted():
    module = dc_module()
    previous = np.array([0, 0, 1, 1, 2, 2])
    # A cyclic permutation, not a swap: the inverted assignment would give [2, 2, 0, 0, 1, 1].
    current = np.array([1, 1, 2, 2, 0, 0])
    assert module.match_clusters(previous, current, 3).tolist() == previous.tolist()
    # With members moved between clusters, each learner keeps the cluster it overlaps most.
    previous = np.repeat(np.arange(4), 5)
    permuted = np.array([2, 3, 0, 1])[previous]
    permuted[[0, 7]] = permuted[[19, 12]]  # two samples change cluster
    matched = module.match_clusters(previous, permuted, 4)
    assert (matched != previous).sum() == 2 and matched[[0, 7]].tolist() == [3, 2]


def test_each_learners_batches_come_from_its_cluster_without_its_single_sample_classes():
    module = dc_module()
    labels = np.repeat(np.arange(16), 3)
    assignment = np.repeat(np.arange(4), 12)  # classes 4c .. 4c+3 in cluster c
    assignment[0] = 3  # class 0 has one sample in cluster 3: dropped there
    plan = module.divided_epoch_batches(assignment, labels, 4, BUDGET, 6, seed=0, epoch=0)
    assert [learner for learner, _ in plan] == [0, 1, 2, 3, 0, 1]  # round-robin, 6 batches
    for learner, batch in plan:
        assert len(batch) == BUDGET["batch_size"]
        assert np.all(assignment[batch] == learner), (learner, batch)
        assert 0 not in batch
    kept = module.drop_single_sample_classes(np.flatnonzero(assignment == 3), labels)
    assert kept.tolist() == list(range(36, 48))  # class 0's single sample is not kept
    # The next epoch draws other batches.
    again = module.divided_epoch_batches(assignment, labels, 4, BUDGET, 6, seed=0, epoch=1)
    assert any(not np.array_equal(a, b) for (_, a), (_, b) in zip(plan, again))
    # A cluster with fewer classes than a batch holds (here 2 of 4) gives smaller batches.
    halves = np.repeat(np.arange(4), 12)
    pairs = module.divided_epoch_batches(halves, np.repeat(np.arange(8), 6), 4, BUDGET, 4, 0, 0)
    assert all(len(batch) == 4 and np.all(halves[batch] == k) for k, batch in pairs)


def tiny_data(num_classes=8, per_class=6, seed=0):
    """Noisy flat-colour 32 x 32 images, `per_class` of each class: `(images, labels)`."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(num_classes), per_class)
    colours = rng.integers(0, 256, size=(num_classes, 1, 1, 3))
    noise = rng.integers(-40, 40, (len(labels), 32, 32, 3))
    return np.clip(colours[labels] + noise, 0, 255).astype("uint8"), labels


def tiny_splits():
    """`run.py`'s splits: 8 training classes x 6 images, 4 unseen test classes x 4."""
    from keras_dml.data import ImageDataset

    def split(num_classes, per_class, seed):
        images, labels = tiny_data(num_classes, per_class, seed)
        return ImageDataset(labels, images=images, image_size=32)

    return {"train": split(8, 6, 0), "val": split(4, 4, 1), "test": split(4, 4, 2)}


def test_divided_epochs_train_one_learners_chunk_and_the_conquer_epoch_trains_all(monkeypatch):
    module = dc_module()
    images, labels = tiny_data()
    plans, clusterings, steps = [], [], []

    def recorded_plan(assignment, *args, **kwargs):
        plans.append((assignment.copy(), module_plan(assignment, *args, **kwargs)))
        return plans[-1][1]

    def recorded_clustering(*args, **kwargs):
        clusterings.append(module_clustering(*args, **kwargs))
        return clusterings[-1]

    module_plan, module_clustering = module.divided_epoch_batches, module.cluster_samples
    monkeypatch.setattr(module, "divided_epoch_batches", recorded_plan)
    monkeypatch.setattr(module, "cluster_samples", recorded_clustering)

    def on_batch(epoch, learner, batch, net):
        grad = net.head.weight.grad.abs().sum(dim=1).reshape(4, 4).sum(dim=1)
        steps.append((epoch, learner, batch, (grad > 0).tolist()))

    embeddings, seconds = module.train_and_embed_dc(
        small_backbone(),
        images,
        labels,
        images[:10],
        BUDGET,
        seed=0,
        conquer_epoch=2,
        on_batch=on_batch,
    )
    # Re-clustered before each divided epoch (T = 1), the last epoch the conquer stage.
    assert len(clusterings) == 2 and len(plans) == 2
    assert [epoch for epoch, *_ in steps] == [0] * 6 + [1] * 6 + [2] * 6
    for epoch, learner, batch, trained in steps:
        if epoch < 2:  # learner k's batch from its cluster trains its chunk only
            assignment, plan = plans[epoch]
            assert np.all(assignment[batch] == learner)
            assert trained == [k == learner for k in range(4)], (epoch, learner, trained)
        else:
            assert learner is None and trained == [True] * 4
    # The trained steps followed the plans.
    assert [learner for e, learner, *_ in steps if e < 2] == [
        learner for _, plan in plans for learner, _ in plan
    ]
    assert embeddings.shape == (10, 16) and seconds > 0
    norms = np.linalg.norm(embeddings.reshape(10, 4, 4), axis=-1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-5)


def test_without_a_conquer_epoch_every_epoch_is_divided():
    images, labels = tiny_data()
    learners = []
    dc_module().train_and_embed_dc(
        small_backbone(),
        images,
        labels,
        images[:4],
        {**BUDGET, "epochs": 2},
        seed=0,
        on_batch=lambda epoch, learner, batch, net: learners.append(learner),
    )
    assert len(learners) == 12 and None not in learners


def spy(monkeypatch, owner, name, calls):
    """Replaces `owner.name` by a wrapper that appends `(name, kwargs)` to `calls`."""
    train = getattr(owner, name)

    def recorded(*args, **kwargs):
        calls.append((name, kwargs))
        return train(*args, **kwargs)

    monkeypatch.setattr(owner, name, recorded)


def test_run_dispatches_the_row_and_records_it_in_the_pretrained_regime(tmp_path, monkeypatch):
    """`run.py --regime pretrained` trains `pml/dc-normalized_softmax` and `pml/normalized_softmax`
    from the pretrained backbone's weights, and records them with the regime and the weights."""
    run = benchmark_script("accuracy.run")
    from keras_dml import backbones

    weights = str(tmp_path / "backbone.weights.h5")
    pretrained = backbones.get("convnet", input_shape=(32, 32, 3))
    randomize_batchnorm(pretrained)
    pretrained.save_weights(weights)
    info = {"sha256": "s", "digest": "d", "classes": 6}
    monkeypatch.setattr(run, "pretrained_backbone", lambda *args: (weights, info))
    import keras_dml.training

    monkeypatch.setattr(keras_dml.training, "load_splits", lambda config: tiny_splits())
    calls = []
    dc, reference = dc_module(), benchmark_script("accuracy.torch_reference")
    spy(monkeypatch, dc, "train_and_embed_dc", calls)
    spy(monkeypatch, reference, "train_and_embed", calls)
    out = tmp_path / "acc"
    sets = ["epochs=2", "batch_size=8", "m_per_class=2", "embedding_dim=16", "backbone=convnet"]
    run.main(
        ["--regime", "pretrained", "--rows", f"pml/normalized_softmax,{ROW}", "--seeds", "0"]
        + ["--output", str(out)]
        + [item for s in sets for item in ("--set", s)]
    )
    assert [name for name, _ in calls] == ["train_and_embed", "train_and_embed_dc"]
    assert all(kwargs["initial_weights"] == weights for _, kwargs in calls)
    assert calls[1][1]["num_learners"] == 4 and calls[1][1]["recluster_every"] == 1
    assert calls[1][1]["conquer_epoch"] == 1  # the last of the 2 epochs, as recorded
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["row"] for r in records] == ["pml/normalized_softmax", ROW]
    assert all(r["regime"] == "pretrained" and r["pretrained"] == info for r in records)
    assert records[1]["settings"] == {
        "backbone": "convnet",
        "recipe": "normalized_softmax",
        "method": "dc",
        "method_options": {"num_learners": 4, "recluster_every": 1, "conquer_epoch": 1},
    }
    assert records[1]["runtime"]["backend"] == "pytorch"
    assert 0.0 < records[1]["metrics"]["recall@1"] <= 1.0
    # The table compares it with PML's own row.
    table = benchmark_script("accuracy.table")
    found = {
        e["row"]: e
        for e in table.differences_from_baseline(table.read_records(out / "results.jsonl"))
    }
    assert found[f"{ROW}@pretrained"]["baseline"] == "pml/normalized_softmax@pretrained"


def test_the_row_pairs_with_pml_normalized_softmax_on_the_same_seed_and_weights():
    run, table = benchmark_script("accuracy.run"), benchmark_script("accuracy.table")
    budget = dict(run.BUDGET)

    def record(row, seed, recall, sha, settings):
        return {
            "row": row,
            "seed": seed,
            "regime": "pretrained",
            "pretrained": {"digest": "d", "sha256": sha},
            "settings": settings,
            "metrics": {"recall@1": recall, "map@r": recall / 2, "r_precision": 0.5, "nmi": 0.5},
            "seconds": 1.0,
        }

    softmax = {"backbone": "vgg_small", "loss": {"name": "normalized_softmax"}}
    pml = run.pml_settings("pml/normalized_softmax", budget)
    method = run.pml_settings(ROW, budget)
    records = [
        record("baseline/normalized_softmax", 0, 0.50, "a", softmax),
        record("pml/normalized_softmax", 0, 0.70, "a", pml),
        record("pml/normalized_softmax", 1, 0.60, "b", pml),
        record(ROW, 0, 0.65, "a", method),
        record(ROW, 1, 0.64, "c", method),  # other weights than PML's seed 1: unpaired
        record("dc/best", 0, 0.45, "a", softmax),
    ]
    rows = {}
    for r in records:
        rows.setdefault(table.table_key(r), []).append(r)
    found = {e["row"]: e for e in table.differences_from_baseline(rows)}
    dc = found[f"{ROW}@pretrained"]
    assert dc["baseline"] == "pml/normalized_softmax@pretrained" and dc["seeds"] == [0]
    assert dc["recall@1"] == pytest.approx(0.65 - 0.70)
    # The other rows pair as before: PML's and keras-dml's D&C with keras-dml's baseline.
    assert found["pml/normalized_softmax@pretrained"]["baseline"] == (
        "baseline/normalized_softmax@pretrained"
    )
    assert found["dc/best@pretrained"]["baseline"] == "baseline/normalized_softmax@pretrained"
