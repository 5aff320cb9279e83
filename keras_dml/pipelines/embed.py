"""`EmbedImages` and `embed_images`: image files embedded on Apache Beam with `RunInference`."""

import os

from keras_dml.export.onnx_model import export_onnx
from keras_dml.pipelines.beam_api import (
    KeyedModelHandler,
    PipelineOptions,
    PTransform,
    RunInference,
    fileio,
    require_beam,
)
from keras_dml.pipelines.decode import DecodeFiles
from keras_dml.pipelines.image_files import (
    ImageFilesOnly,
    file_pattern,
    file_record,
    report_files,
)
from keras_dml.pipelines.model_handler import EmbedderHandler, local_model
from keras_dml.pipelines.progress import Progress, summary
from keras_dml.pipelines.sinks import WriteToStore, to_row, write_parquet
from keras_dml.serving.embedder import Embedder
from keras_dml.stores.identity import model_identity
from keras_dml.stores.milvus import MilvusStore
from keras_dml.stores.uri import DEFAULT_COLLECTION
from keras_dml.zoo.loading import load, resolve_model


class EmbedImages(PTransform):
    """Image files -> rows `{"id", "path", "label", "vector"}`, embedded with `RunInference`.

    Args:
        model: str. A `.keras` file, zoo name, SavedModel folder or `.onnx` file the workers load.
        images: str. A folder (one sub-folder per class gives labels) or a glob pattern (each
            file's folder is its label), local or on any Beam file system (`gs://`, ...).
        image_shape: `(H, W, C)` the model takes, or None to read it from the model here.
            Defaults to `None`.
        batch_size: int. Most images per model call. Defaults to `64`.
    """

    def __init__(self, model, images, image_shape=None, batch_size=64):
        super().__init__()
        self.model, self.images = os.fspath(model), os.fspath(images)
        self.image_shape = tuple(image_shape or fixed_image_shape(launcher_embedder(model)))
        self.batch_size = int(batch_size)

    def expand(self, begin):
        beam = require_beam()
        pattern, root = file_pattern(self.images)
        handler = KeyedModelHandler(EmbedderHandler(self.model, self.batch_size))
        return (
            begin
            | "Match" >> fileio.MatchFiles(pattern, empty_match_treatment="DISALLOW")
            | "Paths" >> beam.Map(lambda found: found.path)
            | "Images" >> beam.ParDo(ImageFilesOnly())
            | "Records" >> beam.Map(file_record, root)
            | "Decode" >> beam.ParDo(DecodeFiles(self.image_shape))
            | "Embed" >> RunInference(handler)
            | "Rows" >> beam.Map(to_row)
            | "Progress" >> beam.ParDo(Progress())
        )


def launcher_embedder(model):
    """The `Embedder` of `model` on the launching machine (a remote file copied here)."""
    return Embedder(resolve_model(local_model(os.fspath(model))))


def fixed_image_shape(embedder):
    """`(H, W, C)` every file is resized to: the model's input size."""
    if embedder.image_size is None:
        raise ValueError(
            f"{embedder.description} takes images of any size; export it with a fixed image size "
            "first (keras-dml export --image-size) so every file is resized to one size."
        )
    return (*embedder.image_size, embedder.channels or 3)


def worker_model(model, onnx_path=None):
    """The model file the workers load: `model`, or its ONNX export at `onnx_path`."""
    if onnx_path is None:
        return os.fspath(model) if "://" in os.fspath(model) else os.path.abspath(model)
    export_onnx(load(model), onnx_path)
    return os.path.abspath(onnx_path)


def embed_images(
    model,
    images,
    store=None,
    output=None,
    collection=DEFAULT_COLLECTION,
    index="flat",
    runner="DirectRunner",
    beam_args=(),
    batch_size=64,
    onnx_path=None,
    strict_files=False,
):
    """Embeds image files on Apache Beam into a vector store (keyed by path) and/or Parquet.

    Args:
        model: str. A `.keras` file, zoo name, SavedModel folder or `.onnx` file.
        images: str. A folder or a glob pattern (see `EmbedImages`).
        store: str or None. A store URI (`MilvusStore`). Defaults to `None`.
        output: str or None. A folder for Parquet shards. Defaults to `None`.
        collection: str. The store's collection. Defaults to `"embeddings"`.
        index: str. The store's index for a new collection: `"flat"` (exact), `"hnsw"` or
            `"ivf"`. Defaults to `"flat"`.
        runner: str. The Beam runner. Defaults to `"DirectRunner"`.
        beam_args: list of str. Further Beam pipeline options (`--project=...`). Defaults to `()`.
        batch_size: int. Most images per model call. Defaults to `64`.
        onnx_path: str or None. Export a `.keras` model there first, so the workers run ONNX
            without TensorFlow. Defaults to `None`.
        strict_files: bool. Fail (after the run) when a file could not be read. Defaults to
            `False`: bad files are skipped and named in a warning.

    Returns:
        dict: the counters `files`, `bad_files`, `non_image_files`, `embedded`, `written`,
            `bad_file_names` and `non_image_file_names`.

    Raises:
        UnreadableFilesError: a file could not be read and `strict_files` is true.
        MissingDependencyError: Apache Beam (or pymilvus for a store) is not installed.
        ModelMismatchError: the store's collection holds another model's embeddings.
    """
    beam = require_beam()
    if store is None and output is None:
        raise ValueError("Give a --store URI, an --output folder for Parquet shards, or both.")
    source, model = os.fspath(model), worker_model(model, onnx_path)
    embedder = launcher_embedder(model)
    image_shape = fixed_image_shape(embedder)
    if store is not None:
        MilvusStore(store, collection).prepare(model_identity(embedder, source), index).close()
    options = PipelineOptions([f"--runner={runner}", *beam_args])
    pipeline = beam.Pipeline(options=options)
    rows = pipeline | "EmbedImages" >> EmbedImages(model, images, image_shape, batch_size)
    if store is not None:
        _ = rows | "WriteToStore" >> beam.ParDo(WriteToStore(store, collection))
    if output is not None:
        write_parquet(rows, output)
    result = pipeline.run()
    result.wait_until_finish()
    counts = summary(result)
    report_files(counts, f"embed {os.fspath(images)!r}", strict_files)
    return counts
