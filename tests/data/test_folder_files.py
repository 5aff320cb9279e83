"""Folder data: skipped files and kept-out classes are named; strict_files makes bad files fatal."""

import os
import warnings

import numpy as np
import pytest
from PIL import Image

from keras_dml.data import load_dataset
from keras_dml.data.file_report import UnreadableFilesError, first_few
from keras_dml.training import train
from keras_dml_cli import main

RUN = {
    "method": "baseline",
    "dataset": "image_folder",
    "image_size": 32,
    "backbone": {"name": "convnet"},
    "epochs": 1,
    "model": {"embedding_dim": 8},
}


def photos(root, classes=8, per_class=4):
    """`root/c<i>/<j>.png`, a class `solo` of one image, a text file and a broken image."""
    rng = np.random.default_rng(0)
    for c in range(classes):
        os.makedirs(root / f"c{c}")
        for i in range(per_class):
            pixels = rng.integers(0, 255, (32, 32, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / f"c{c}" / f"{i}.png")
    os.makedirs(root / "solo")
    Image.fromarray(np.zeros((32, 32, 3), np.uint8)).save(root / "solo" / "0.png")
    (root / "c0" / "notes.txt").write_text("not an image")
    (root / "c1" / "broken.png").write_bytes(b"not an image")
    return str(root)


def messages(record):
    return [str(w.message) for w in record]


def test_train_on_a_folder_names_skipped_files_ignored_files_and_kept_out_classes(tmp_path):
    folder = photos(tmp_path / "photos")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = train({**RUN, "data_dir": folder}, str(tmp_path / "run"), verbose=0, report=False)
    text = "\n".join(messages(record))
    assert f"ignoring 1 files (not .jpg .jpeg .png .gif .bmp .webp): {folder}/c0/notes.txt" in text
    assert "keeping 1 classes with fewer than 2 images out of every split" in text
    assert "a positive pair): solo." in text
    assert "skipping 1 of 13 image files" in text and f"{folder}/c1/broken.png" in text
    assert np.isfinite(result["metrics"]["recall@1"])
    with pytest.raises(UnreadableFilesError, match=r"1 of 13 image files cannot be read: .*broken"):
        train(
            {**RUN, "data_dir": folder, "dataset_options": {"strict_files": True}},
            str(tmp_path / "strict"),
            verbose=0,
            report=False,
        )


def test_single_image_classes_never_reach_a_split(tmp_path):
    folder = photos(tmp_path / "photos")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        splits = [
            load_dataset("image_folder", s, data_dir=folder) for s in ("train", "val", "test")
        ]
    for split in splits:
        assert "solo" not in split.class_names
        assert np.bincount(split.labels).max() >= 2 and 1 not in np.bincount(split.labels)


def test_a_val_class_left_with_one_readable_image_is_named_with_its_split(tmp_path):
    root = tmp_path / "photos"
    folder = photos(root, per_class=2)
    os.remove(root / "c1" / "broken.png")
    val = load_dataset("image_folder", "val", data_dir=folder, verify=False)
    (name,) = val.class_names
    (root / name / "0.png").write_bytes(b"broken now")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=rf"split `val` has no class with 2 readable .*{name}"):
            train({**RUN, "data_dir": folder}, str(tmp_path / "run"), verbose=0, report=False)


def test_a_test_class_left_with_one_image_is_kept_out_and_named(tmp_path):
    root = tmp_path / "photos"
    folder = photos(root, per_class=2)
    test = load_dataset("image_folder", "test", data_dir=folder, verify=False)
    name = test.class_names[0]
    (root / name / "0.png").write_bytes(b"broken now")
    with pytest.warns(UserWarning, match=rf"split `test`: keeping out 1 classes .*: {name}\."):
        test = load_dataset("image_folder", "test", data_dir=folder)
    assert len(test) == 2 * (test.num_classes - 1)
    assert test.class_names[0] == name and 0 not in test.labels


def test_first_few_names_five_and_counts_the_rest():
    assert first_few([f"f{i}" for i in range(7)]) == "f0, f1, f2, f3, f4 and 2 more"
    assert first_few(["a", "b"]) == "a, b"


def test_the_sampler_names_the_labels_it_excludes():
    from keras_dml.data import MPerClassSampler

    labels = np.array([0, 0, 1, 2, 2, 3, 3, 5])
    with pytest.warns(UserWarning, match=r"2 of 5 classes have a single image .*: labels 1, 5\."):
        MPerClassSampler(labels, m=2, batch_size=4)


def test_the_train_command_stops_at_an_unreadable_image_with_strict_files(tmp_path, capsys):
    folder = photos(tmp_path / "photos")
    argv = ["train", "--method", "baseline", "--dataset", "image_folder", "--data-dir", folder]
    argv += ["--backbone", "convnet", "--image-size", "32", "--epochs", "1", "--embedding-dim", "8"]
    assert main([*argv, "--strict-files", "--output", str(tmp_path / "run")]) == 1
    error = capsys.readouterr().err
    assert "1 of 13 image files cannot be read" in error and "broken.png" in error
