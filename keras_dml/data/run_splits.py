"""The dataset splits a run configuration names: train, validation and its test protocol."""

from keras_dml.data.datasets import load_dataset

# Datasets whose test protocol is a query set searched against a gallery set.
QUERY_GALLERY_DATASETS = ("inshop",)


def load_splits(config):
    """Loads `train`, `val` and either `test` or `query` + `gallery` of a resolved configuration."""

    def load(split):
        return load_dataset(
            config["dataset"],
            split=split,
            data_dir=config["data_dir"],
            image_size=config["image_size"],
            seed=config["seed"],
            **config["dataset_options"],
        )

    splits = {"train": load("train"), "val": load("val")}
    if config["dataset"] in QUERY_GALLERY_DATASETS:
        splits.update(query=load("query"), gallery=load("gallery"))
    else:
        splits["test"] = load("test")
    return splits
