"""Input pipeline throughput: `tf.data` (`make_tf_dataset`) vs the PyDataset (`make_py_dataset`).

Images per second of one training epoch (`MPerClassSampler` batches of 4 classes, each
pipeline's default augmentation of the source: none in memory, crop + flip for files), side by
side in one run, for in-memory digits and for a folder of JPEG files the script writes (the
digits upscaled to `--file-size` px), at each crop size of `--sizes`. The first epoch of each
pipeline is a warm-up (tf.data traces its functions, the PyDataset starts its worker processes);
the median of `--epochs` timed epochs is reported. The machine's load average is printed and
recorded: numbers from a loaded machine are not comparable with an idle one. Results are written
as JSON.

Examples:
    python -m benchmarks.speed.input_pipeline --images 64 --epochs 1 --output /tmp/pipeline.json
    python -m benchmarks.speed.input_pipeline --images 2048 --sizes 32 224 --workers 4
"""

import argparse
import json
import os
import platform
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
from PIL import Image

from benchmarks.records import RESULTS


def datasets(images, file_size, folder):
    """`{"memory": ImageDataset, "jpeg_files": ImageDataset}` of `images` digits."""
    from keras_dml.data import ImageDataset, load_dataset

    digits = load_dataset("digits", split="train")
    picks = np.random.default_rng(0).permutation(np.arange(images) % len(digits))
    labels = digits.labels[picks]
    memory = ImageDataset(labels, images=digits.images[picks])
    paths = []
    for number, index in enumerate(picks):
        path = os.path.join(folder, f"{number}.jpg")
        picture = Image.fromarray(np.squeeze(digits.images[index]))
        picture.convert("RGB").resize((file_size, file_size)).save(path, quality=90)
        paths.append(path)
    return {"memory": memory, "jpeg_files": ImageDataset(labels, paths=paths)}


def epoch_seconds(pipeline, sampler, build, epochs):
    """Median seconds of one epoch over `epochs` epochs, after one warm-up epoch."""
    from keras_dml.data.image_batches import ImageBatches

    dataset = build()
    times = []
    for epoch in range(epochs + 1):
        sampler.set_epoch(epoch)
        start = time.perf_counter()
        if isinstance(dataset, ImageBatches):
            dataset.on_epoch_begin()
            for step in range(len(dataset)):
                dataset[step]
            dataset.on_epoch_end()
        else:
            for _ in dataset:
                pass
        if epoch:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(args):
    from keras_dml.data import MPerClassSampler

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for source, data in datasets(args.images, args.file_size, folder).items():
            for size in args.sizes:
                for pipeline in ("tf_data", "py_dataset"):
                    sampler = MPerClassSampler(
                        data.labels, args.batch_size // 4, args.batch_size, seed=0
                    )

                    def build(data=data, size=size, pipeline=pipeline, sampler=sampler):
                        arguments = dict(training=True, sampler=sampler, image_size=size, seed=0)
                        if pipeline == "tf_data":
                            return data.as_tf_dataset(**arguments)
                        from keras_dml.data import PipelineOptions, make_py_dataset

                        options = PipelineOptions(num_parallel_calls=args.workers, **arguments)
                        return make_py_dataset(data, options)

                    seconds = epoch_seconds(pipeline, sampler, build, args.epochs)
                    images = sampler.num_batches * sampler.batch_size
                    rows.append(
                        dict(
                            source=source,
                            image_size=size,
                            pipeline=pipeline,
                            images=images,
                            seconds=round(seconds, 4),
                            images_per_second=round(images / seconds, 1),
                        )
                    )
                    print(
                        f"{source:10s} {size:4d} px  {pipeline:10s} "
                        f"{images / seconds:10.1f} images/s"
                    )
    return rows


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=512, help="images per source")
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 224], help="crop sizes")
    parser.add_argument("--file-size", type=int, default=256, help="side of the JPEG files")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs (after a warm-up)")
    parser.add_argument("--workers", type=int, default=None, help="PyDataset worker processes")
    parser.add_argument(
        "--output", default=os.path.join(RESULTS, "input_pipeline.json"), help="JSON result"
    )
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"load average {load}, {os.cpu_count()} cores, {platform.processor() or 'cpu'}")
    rows = measure(args)
    result = dict(
        arguments={k: v for k, v in vars(args).items() if k != "output"},
        cpu_count=os.cpu_count(),
        load_average=load,
        rows=rows,
    )
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as file:
        json.dump(result, file, indent=2)
        file.write("\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
