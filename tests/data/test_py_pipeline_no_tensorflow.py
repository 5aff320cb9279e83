"""The PyDataset pipeline runs on JAX and PyTorch with `import tensorflow` blocked.

Each check runs in a fresh interpreter with `import tensorflow` blocked by an import hook
(`tests.support.no_tensorflow`), in the pipeline's worker processes too.
"""

import textwrap

import pytest

from tests.support.no_tensorflow import run_blocked

PIPELINE_RUN = textwrap.dedent(
    """
    import os, sys, tempfile, warnings
    import numpy as np
    from PIL import Image
    import keras
    import keras_dml.data as data

    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(6), 4)
    arrays = data.ImageDataset(labels, images=rng.integers(0, 256, (24, 20, 20), np.uint8),
                               image_size=16)
    folder = tempfile.mkdtemp()
    paths = []
    for i, label in enumerate(labels):
        path = os.path.join(folder, f"{label}", f"{i}.{'png' if i % 2 else 'jpg'}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (30, 26, 3), np.uint8)).save(path)
        paths.append(path)
    with open(os.path.join(folder, "0", "corrupt.jpg"), "wb") as handle:
        handle.write(b"not an image")
    files = data.ImageDataset([*labels, 0], paths=[*paths, handle.name], image_size=16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        files.verify()
    assert files.skipped_files == [handle.name], files.skipped_files
    assert any("skipping 1" in str(w.message) for w in caught)

    sampler = data.MPerClassSampler(files.labels, m=2, batch_size=8, seed=0)
    batches = files.as_dataset(training=True, sampler=sampler, seed=0, num_parallel_calls=1)
    assert type(batches).__name__ == "ImageBatches"
    images, batch_labels = batches[0]
    assert images.shape == (8, 16, 16, 3) and images.dtype == np.float32
    assert batch_labels.dtype == np.int32

    clusters = labels % 2
    cluster_sampler = data.ClusterMPerClassSampler(labels, clusters, m=2, batch_size=4,
                                                   seed=0, epoch_length=3)
    cluster_batches = arrays.as_dataset(True, sampler=cluster_sampler, with_clusters=True)
    for step in range(len(cluster_batches)):
        images, targets = cluster_batches[step]
        assert set(targets) == {"labels", "clusters"}
        assert (targets["labels"] % 2 == targets["clusters"]).all()

    model = keras.Sequential([keras.Input((16, 16, 3)), keras.layers.Flatten(),
                              keras.layers.Dense(6)])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(batches, epochs=2, verbose=0, shuffle=False,
                        callbacks=[data.SamplerEpochCallback(sampler)])
    assert len(history.history["loss"]) == 2 and sampler.epoch == 2
    assert "tensorflow" not in sys.modules, "tensorflow was imported"
    print("PIPELINE-RAN-WITHOUT-TENSORFLOW")
    """
)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_pipeline_builds_iterates_and_fits_with_tensorflow_blocked(tmp_path, backend):
    result = run_blocked(tmp_path, backend, PIPELINE_RUN)
    assert "PIPELINE-RAN-WITHOUT-TENSORFLOW" in result.stdout, result.stderr[-3000:]


def test_the_import_hook_blocks_tensorflow(tmp_path):
    result = run_blocked(tmp_path, "jax", "import tensorflow")
    assert result.returncode != 0
    assert "tensorflow is blocked by the test's import hook" in result.stderr
