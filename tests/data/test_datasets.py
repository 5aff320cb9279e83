"""Dataset loaders: official layouts, class splits, held-out validation, broken files, errors."""

import os
import types
import warnings

import numpy as np
import pytest

from keras_dml.data.datasets import (
    fashion_mnist,
    from_arrays,
    list_datasets,
    load_dataset,
    tfds_datasets,
)
from tests.support.data_fixtures import (
    make_cars,
    make_cub,
    make_fashion_idx,
    make_image_folder,
    make_inshop,
    make_sop,
    make_vehicleid,
    write_image,
)


def _raw_classes(dataset):
    return {dataset.class_names[label] for label in dataset.labels}


def _load_quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_dataset(*args, **kwargs)


def _check_labels(dataset):
    assert dataset.labels.dtype == np.int64
    assert len(dataset.labels) == len(dataset)
    assert set(dataset.labels.tolist()) <= set(range(dataset.num_classes))
    if dataset.paths is not None:
        assert len(dataset.paths) == len(dataset.labels)
        assert all(os.path.isfile(p) for p in dataset.paths)


def test_registry_lists_every_dataset_and_suggests_close_names():
    names = list_datasets()
    for name in (
        "cub200",
        "cars196",
        "sop",
        "inshop",
        "vehicleid",
        "digits",
        "fashion_mnist",
        "hangul",
    ):
        assert name in names
    assert "tfds:caltech_birds2011" in names and "image_folder" in names
    with pytest.raises(ValueError, match="Did you mean 'cub200'\\?") as info:
        load_dataset("cub2000")
    assert "cars196" in str(info.value)


def test_cub200_protocol_val_holdout_and_broken_files(tmp_path):
    make_cub(str(tmp_path))
    with pytest.warns(UserWarning, match=r"skipping 2 of 8 image files") as record:
        trainval = load_dataset("cub200", "trainval", data_dir=str(tmp_path))
    message = str(record[0].message)
    assert "Bird_1_2.jpg (OSError" in message and "Bird_1_3.jpg (missing file)" in message
    val = _load_quiet("cub200", "val", data_dir=str(tmp_path))
    train = _load_quiet("cub200", "train", data_dir=str(tmp_path))
    test = load_dataset("cub200", "test", data_dir=str(tmp_path))
    for ds in (train, val, trainval, test):
        _check_labels(ds)
    assert len(trainval.skipped_files) == 2
    assert _raw_classes(trainval) == {"001.Bird_1", "002.Bird_2", "003.Bird_3"}
    assert _raw_classes(test) == {"101.Bird_101", "102.Bird_102", "103.Bird_103"}
    assert len(_raw_classes(val)) == 1 and not _raw_classes(val) & _raw_classes(train)
    assert _raw_classes(val) | _raw_classes(train) == _raw_classes(trainval)
    assert len(trainval) == 6 and len(test) == 6 and not test.skipped_files
    # The default location fails with an error that names the searched folders.
    with pytest.raises(FileNotFoundError, match="images.txt"):
        load_dataset("cub200", data_dir=str(tmp_path / "nowhere"))


def test_val_classes_change_with_seed_and_are_stable_per_seed(tmp_path):
    names = make_image_folder(str(tmp_path), num_classes=20, per_class=2)
    assert len(names) == 20
    vals = [
        _raw_classes(load_dataset("image_folder", "val", data_dir=str(tmp_path), seed=s))
        for s in (0, 0, 1, 2)
    ]
    assert vals[0] == vals[1]
    assert len({frozenset(v) for v in vals}) > 1


def test_cars196_reads_mat_annotations(tmp_path):
    make_cars(str(tmp_path))
    train = _load_quiet("cars196", "trainval", data_dir=str(tmp_path))
    test = load_dataset("cars196", "test", data_dir=str(tmp_path))
    assert _raw_classes(train) == {"Car model 1", "Car model 2", "Car model 3"}
    assert _raw_classes(test) == {"Car model 99", "Car model 100", "Car model 101"}
    assert len(train) == 6 and len(train.skipped_files) == 2 and len(test) == 6
    _check_labels(train)


def test_sop_lists_and_super_labels(tmp_path):
    make_sop(str(tmp_path))
    train = _load_quiet("sop", "train", data_dir=str(tmp_path))
    val = _load_quiet("sop", "val", data_dir=str(tmp_path))
    test = load_dataset("sop", "test", data_dir=str(tmp_path))
    assert _raw_classes(test) == {"11319", "11320", "11321"}
    assert _raw_classes(train) | _raw_classes(val) == {"1", "2", "3", "4"}
    assert not _raw_classes(train) & _raw_classes(val)
    for ds in (train, val, test):
        _check_labels(ds)
        assert len(ds.super_labels) == len(ds)
        names = np.array(ds.class_names)[ds.labels].astype(int)
        np.testing.assert_array_equal(ds.super_labels, 1 + names % 2)


def test_inshop_query_gallery_share_labels(tmp_path):
    make_inshop(str(tmp_path))
    query = load_dataset("inshop", "query", data_dir=str(tmp_path))
    gallery = load_dataset("inshop", "gallery", data_dir=str(tmp_path))
    train = _load_quiet("inshop", "trainval", data_dir=str(tmp_path))
    assert query.class_names == gallery.class_names
    assert len(query) == 3 and len(gallery) == 6
    assert sorted(query.labels.tolist()) == [0, 1, 2] and set(gallery.labels.tolist()) == {0, 1, 2}
    assert len(train) == 12 and train.num_classes == 4
    assert not set(train.class_names) & set(query.class_names)
    with pytest.raises(ValueError, match="split='query' and split='gallery'"):
        load_dataset("inshop", "test", data_dir=str(tmp_path))


def test_vehicleid_test_sizes_and_gallery_protocol(tmp_path):
    make_vehicleid(str(tmp_path))
    sizes = {
        size: load_dataset("vehicleid", "test", data_dir=str(tmp_path), test_size=size).num_classes
        for size in ("small", "medium", "large")
    }
    assert sizes == {"small": 2, "medium": 4, "large": 6}
    query = load_dataset("vehicleid", "query", data_dir=str(tmp_path), test_size="medium")
    gallery = load_dataset("vehicleid", "gallery", data_dir=str(tmp_path), test_size="medium")
    assert np.bincount(gallery.labels).tolist() == [1, 1, 1, 1]
    assert len(query) == 8 and not set(query.paths) & set(gallery.paths)
    train = _load_quiet("vehicleid", "train", data_dir=str(tmp_path))
    assert len(train.skipped_files) == 2 and train.num_classes == 2
    with pytest.raises(ValueError, match="test_size"):
        load_dataset("vehicleid", "test", data_dir=str(tmp_path), test_size="huge")


def test_image_folder_split_covers_classes_disjointly(tmp_path):
    names = make_image_folder(str(tmp_path), num_classes=6)
    splits = {s: load_dataset("image_folder", s, data_dir=str(tmp_path)) for s in ("train", "val")}
    test = load_dataset("image_folder", "test", data_dir=str(tmp_path))
    train, val = splits["train"], splits["val"]
    assert len(_raw_classes(test)) == 3 and len(_raw_classes(val)) == 1
    assert _raw_classes(train) | _raw_classes(val) | _raw_classes(test) == set(names)
    assert not _raw_classes(train) & _raw_classes(test)
    assert all(len(ds) == 2 * ds.num_classes for ds in (train, val, test))
    with pytest.raises(ValueError, match="split"):
        load_dataset("image_folder", "query", data_dir=str(tmp_path))
    with pytest.raises(ValueError, match="data_dir"):
        load_dataset("image_folder")


def test_from_arrays_remaps_and_splits():
    images = np.zeros((8, 6, 6), np.uint8)
    labels = np.array([5, 5, 9, 9, 2, 2, 7, 7])
    everything = from_arrays(images, labels)
    assert everything.class_names == ["2", "5", "7", "9"] and everything.images.shape[-1] == 1
    assert everything.labels.tolist() == [1, 1, 3, 3, 0, 0, 2, 2]
    train = from_arrays(images, labels, split="trainval", seed=3)
    test = from_arrays(images, labels, split="test", seed=3)
    assert len(train) == len(test) == 4 and not set(train.class_names) & set(test.class_names)
    with pytest.raises(ValueError, match="one entry per image"):
        from_arrays(images, labels[:3])
    with pytest.raises(ValueError, match="uint8"):
        from_arrays(images.astype(np.float32), labels)


def test_digits_unseen_class_split():
    splits = {s: load_dataset("digits", s) for s in ("train", "val", "trainval", "test")}
    assert splits["test"].class_names == ["6", "7", "8", "9"]
    assert set(splits["train"].class_names) | set(splits["val"].class_names) == set("012345")
    assert splits["val"].num_classes == 2 and splits["train"].num_classes == 4
    assert len(splits["train"]) + len(splits["val"]) == len(splits["trainval"])
    images = splits["test"].images
    assert images.shape[1:] == (32, 32, 3) and images.dtype == np.uint8 and images.max() > 200
    assert load_dataset("digits", "test", image_size=16).images.shape[1:] == (16, 16, 3)
    with pytest.raises(ValueError, match="val_fraction > 0"):
        load_dataset("digits", "val", val_fraction=0.0)


def test_fashion_mnist_from_debian_package():
    if not os.path.isdir(fashion_mnist.DEBIAN_DIR):
        pytest.skip("install with: apt-get install dataset-fashion-mnist")
    test = load_dataset("fashion_mnist", "test", max_per_class=5)
    assert test.class_names == ["Shirt", "Sneaker", "Bag", "Ankle boot"]
    assert len(test) == 20 and test.images.shape[1:] == (28, 28, 1)
    assert np.bincount(test.labels).tolist() == [5, 5, 5, 5]


def test_fashion_mnist_user_folder_and_missing_error(tmp_path, monkeypatch):
    make_fashion_idx(str(tmp_path / "fm"), per_class=3)
    trainval = load_dataset("fashion_mnist", "trainval", data_dir=str(tmp_path / "fm"))
    assert len(trainval) == 6 * 6 and trainval.num_classes == 6  # 3 per file, 2 files pooled
    first = trainval.images[trainval.labels == 2][0]
    assert int(first.max()) == 40  # class 2 was written with value 2 * 20
    monkeypatch.setattr(fashion_mnist, "DEBIAN_DIR", str(tmp_path / "no_debian"))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "no_keras"))
    with pytest.raises(FileNotFoundError, match="apt-get install dataset-fashion-mnist") as info:
        load_dataset("fashion_mnist", "test", data_dir=str(tmp_path / "empty"))
    assert "no_keras" in str(info.value) and "empty" in str(info.value)


def _fake_tfds(examples_per_split, label_key="label"):
    """A stand-in for the tensorflow_datasets module: load / as_numpy / decode.SkipDecoding."""

    def load(name, split, **kwargs):
        assert kwargs["download"] is True and "image" in kwargs["decoders"]
        info = types.SimpleNamespace(features={label_key: types.SimpleNamespace(names=None)})
        return examples_per_split[split], info

    decode = types.SimpleNamespace(SkipDecoding=lambda: "skip")
    return types.SimpleNamespace(load=load, as_numpy=lambda ds: iter(ds), decode=decode)


def test_tfds_loader_exports_once_and_splits_classes(tmp_path, monkeypatch):
    source = tmp_path / "src.jpg"
    write_image(str(source), 0)
    data = source.read_bytes()
    examples = {
        "train": [{"image": data, "label": c} for c in (0, 1, 2, 150, 150)],
        "test": [{"image": data, "label": c} for c in (3, 120, 199)],
    }
    monkeypatch.setattr(tfds_datasets, "_tfds", lambda: _fake_tfds(examples))
    kwargs = {"cache_dir": str(tmp_path / "cache")}
    test = load_dataset("tfds:caltech_birds2011", "test", **kwargs)
    assert sorted(test.class_names) == ["120", "150", "199"] and len(test) == 4
    monkeypatch.setattr(tfds_datasets, "_tfds", lambda: pytest.fail("exported data re-read"))
    trainval = load_dataset("tfds:caltech_birds2011", "trainval", **kwargs)
    assert trainval.class_names == ["0", "1", "2", "3"]
    assert all(p.endswith(".jpg") for p in trainval.paths)


def test_tfds_absent_data_raises_clear_error(tmp_path):
    pytest.importorskip("tensorflow_datasets")
    with pytest.raises(FileNotFoundError, match="download=True"):
        load_dataset(
            "tfds:cars196",
            "test",
            data_dir=str(tmp_path / "tfds"),
            cache_dir=str(tmp_path / "cache"),
            download=False,
        )
