"""Apache Beam's DirectRunner against `embed()` in one process: the same model and the same image
files, images per second, side by side in one run.

Data: `--num-images` PNG files (seeded random pixels, `--image-size` px) in `--classes` class
folders of a temporary folder. Model: an untrained `EmbeddingModel` (`--backbone`, 128-d) saved as
`.keras`: what is measured is the speed, not the embeddings.

Measured, in this order, in one process, each from the `.keras` file to the last vector:
1. `embed()` in one process: the model loaded, the files read and decoded by the input contract
   (`read_images`), then `keras_dml.serving.embed.embed(model, images)`;
2. Beam DirectRunner into a Milvus Lite file: `embed_images(model, folder, store=...)` (file
   matching, decoding, `RunInference`, upserts keyed by path);
3. Beam DirectRunner into Parquet shards (`embed_images(..., output=...)`).
Each: wall time, images per second, and its time against step 1's.

Run (Apache Beam and Milvus Lite installed: `pip install "keras-dml[beam,milvus]"`):
    python -m benchmarks.scale_out.beam_embed --num-images 10000
    python -m benchmarks.scale_out.beam_embed --num-images 500   # quick
"""

import argparse
import os
import shutil
import tempfile
import time

import numpy as np
from PIL import Image

from benchmarks.records import RESULTS, write_record
from benchmarks.scale_out.milvus_search import machine_line
from keras_dml import backbones
from keras_dml.models import EmbeddingModel
from keras_dml.pipelines.embed import embed_images
from keras_dml.search.gallery import list_image_folder, read_images
from keras_dml.serving.embed import embed
from keras_dml.serving.embedder import Embedder
from keras_dml.zoo.loading import load


def build_parser():
    """The command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num-images", type=int, default=10000)
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--backbone", default="convnet")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--record",
        default=os.path.join(RESULTS, "scale_out_beam_embed.json"),
        help="JSON record (default benchmarks/results/scale_out_beam_embed.json)",
    )
    return parser


def write_images(folder, count, size, classes, seed=0):
    rng = np.random.default_rng(seed)
    for i in range(count):
        path = os.path.join(folder, f"class_{i % classes:03d}", f"{i:06d}.png")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(path)


def in_one_process(model_path, folder, batch_size):
    model = load(model_path)
    paths = list_image_folder(folder)[0]
    images = read_images(paths, Embedder(model).image_size)
    return embed(model, images, batch_size=batch_size, verbose=False)[0].shape[0]


def timed(name, fn, count):
    start = time.perf_counter()
    rows = fn()
    seconds = time.perf_counter() - start
    entry = {"seconds": round(seconds, 1), "images_per_second": round(count / seconds, 1)}
    entry["rows"], entry["load_average"] = int(rows), round(os.getloadavg()[0], 1)
    print(f"  {name}: {entry}", flush=True)
    return entry


def summary_lines(record):
    """The lines the run prints at its end (the docs quote them)."""
    m = record["measured"]
    lines = [machine_line(record)]
    lines.append(f"{m['num_images']:,} images of {m['image_size']} px, {m['backbone']}:")
    for key, name in (
        ("embed", "embed() in one process"),
        ("beam_milvus", "Beam DirectRunner -> Milvus Lite"),
        ("beam_parquet", "Beam DirectRunner -> Parquet"),
    ):
        entry = m[key]
        ratio = "" if key == "embed" else f", {entry['time_vs_embed']}x embed()'s time"
        lines.append(f"{name}: {entry['seconds']} s, {entry['images_per_second']} images/s{ratio}")
    return lines


def main(argv=None):
    """Embeds the same files three ways; prints and records the speeds."""
    args = build_parser().parse_args(argv)
    folder = tempfile.mkdtemp(prefix="beam_bench_")
    try:
        images = os.path.join(folder, "images")
        write_images(images, args.num_images, args.image_size, args.classes)
        backbone = backbones.get(args.backbone, input_shape=(args.image_size, args.image_size, 3))
        model_path = os.path.join(folder, "model.keras")
        EmbeddingModel(backbone, embedding_dim=128).save(model_path)
        count = args.num_images
        print(f"{count:,} images of {args.image_size} px, {args.backbone}", flush=True)
        store, output = os.path.join(folder, "bench.db"), os.path.join(folder, "parquet")
        options = {"batch_size": args.batch_size}
        measured_values = {
            "num_images": count,
            "image_size": args.image_size,
            "backbone": args.backbone,
            "batch_size": args.batch_size,
            "embed": timed(
                "embed()", lambda: in_one_process(model_path, images, args.batch_size), count
            ),
            "beam_milvus": timed(
                "Beam -> Milvus Lite",
                lambda: embed_images(model_path, images, store=store, **options)["written"],
                count,
            ),
            "beam_parquet": timed(
                "Beam -> Parquet",
                lambda: embed_images(model_path, images, output=output, **options)["embedded"],
                count,
            ),
        }
        for key in ("beam_milvus", "beam_parquet"):
            ratio = measured_values[key]["seconds"] / measured_values["embed"]["seconds"]
            measured_values[key]["time_vs_embed"] = round(ratio, 2)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    record = write_record(args.record, "scale_out.beam_embed", argv, measured_values)
    print("\n".join(summary_lines(record)))
    return record


if __name__ == "__main__":
    main()
