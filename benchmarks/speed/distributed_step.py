"""Step time of every method under a 2-replica `MirroredStrategy` next to one device's.

Two logical CPU devices share the machine's cores, so this measures the strategy's overhead
(splitting the batch, all-gathering embeddings for in-batch losses, all-reducing gradients), not a
speed-up: on real accelerators each replica has its own device. Both timings use the same global
batch, backbone and method, interleaved in one process (the median step, timed between batch
ends, over `--repeats` epochs of `--steps` steps after a warm-up epoch), so the ratio is
comparable even on a loaded machine. The medians go to the run's record (`--record`, default
`benchmarks/results/speed_distributed_step.json`).

Usage:
    python -m benchmarks.speed.distributed_step --steps 10 --repeats 3
    python -m benchmarks.speed.distributed_step --methods baseline,dc --image-size 64
"""

import argparse
import os
import platform
import time
import types

from benchmarks.records import add_record_option, write_record


def _step_clock():
    import keras

    class StepClock(keras.callbacks.Callback):
        """Wall time between consecutive batch ends: the step, without `fit`'s set-up."""

        def on_train_begin(self, logs=None):
            self.steps, self._last = [], time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            now = time.perf_counter()
            self.steps.append(now - self._last)
            self._last = now

    return StepClock


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="*", help="comma-separated names; * = every method")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--backbone", default="convnet")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    add_record_option(parser, "speed_distributed_step.json")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)

    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras
    import numpy as np

    from keras_dml import backbones
    from keras_dml.methods import get_method, list_methods
    from keras_dml.methods.defaults import compile_with_config
    from keras_dml.training import resolve_run

    names = list_methods() if args.methods == "*" else args.methods.split(",")
    size, batch = args.image_size, args.batch_size
    rng = np.random.default_rng(0)
    count = batch * args.steps
    images = (rng.random((count, size, size, 3)) * 255).astype("float32")
    labels = np.tile(np.repeat(np.arange(batch // 4), 4), args.steps).astype("int32")

    def build(name):
        spec = get_method(name)
        train_split = types.SimpleNamespace(labels=labels, num_classes=batch // 4)
        config = resolve_run({"method": name, "dataset": "digits"}, {"train": train_split})
        config = config.to_dict()
        keras.utils.set_random_seed(0)
        backbone = backbones.get(args.backbone, input_shape=(size, size, 3))
        model = spec.tiny_model(backbone)
        (spec.compile or compile_with_config)(config, model)
        return model

    def targets(name):
        if name in ("dc", "hdc"):
            return {"labels": labels, "clusters": np.zeros_like(labels)}
        return labels

    StepClock = _step_clock()
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    print(
        f"[distributed_step] {platform.node()} {os.cpu_count()} cores, load "
        f"{tuple(round(x, 1) for x in os.getloadavg())}, {args.backbone} {size} px, global "
        f"batch {batch}, {args.steps} steps x {args.repeats}",
        flush=True,
    )
    print(f"{'method':<10} {'1 device':>10} {'2 replicas':>11} {'ratio':>6}")
    medians = {}
    for name in names:
        single = build(name)
        with strategy.scope():
            mirrored = build(name)
        times = {"single": [], "mirrored": []}
        for model in (single, mirrored):  # warm-up: tracing and variable creation
            model.fit(images, targets(name), batch_size=batch, epochs=1, verbose=0, shuffle=False)
        for _ in range(args.repeats):
            for key, model in (("single", single), ("mirrored", mirrored)):
                clock = StepClock()
                model.fit(
                    images,
                    targets(name),
                    batch_size=batch,
                    epochs=1,
                    verbose=0,
                    shuffle=False,
                    callbacks=[clock],
                )
                times[key].extend(clock.steps[1:])  # the first includes the iterator's start
        one, two = np.median(times["single"]), np.median(times["mirrored"])
        print(f"{name:<10} {one * 1e3:>8.1f}ms {two * 1e3:>9.1f}ms {two / one:>5.2f}x", flush=True)
        medians[name] = {"one_device_seconds": float(one), "two_replicas_seconds": float(two)}
    steps = ", ".join(
        f"{name} {1e3 * m['one_device_seconds']:.0f} / {1e3 * m['two_replicas_seconds']:.0f} ms "
        f"({m['two_replicas_seconds'] / m['one_device_seconds']:.2f}x)"
        for name, m in medians.items()
    )
    row = {
        "what": f"2-replica `MirroredStrategy` step vs one device, same global batch "
        f"({args.backbone} {size} px, batch {batch}, two logical CPU devices sharing "
        f"{os.cpu_count()} cores: the strategy's overhead, not a speed-up)",
        "result": f"median step 1 device / 2 replicas: {steps}",
        "target": "reported",
    }
    write_record(args.record, "speed.distributed_step", argv, {"median_step": medians}, [row])
    return medians


if __name__ == "__main__":
    main()
