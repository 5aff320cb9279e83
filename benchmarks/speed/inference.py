"""Inference speed of one embedding model through Keras, TF SavedModel and ONNX Runtime.

Builds `EmbeddingModel` on a backbone (random weights: speed does not depend on them), exports it
with `keras_dml.export`, and measures in one run, interleaving the runtimes round by round so
that machine load affects them alike:

- latency at batch 1 (median and p90 over `--latency-runs` calls, ms),
- throughput at batch `--batch-size` (images/s, median over `--throughput-runs` calls),
- parity: max |runtime - Keras| on the throughput batch (random raw-pixel images).

Keras runs `model.predict_on_batch` (a compiled tf.function); the SavedModel runs its
`serving_default` signature; ONNX Runtime runs the CPU provider with `intra_op_num_threads =
--threads` (default: all cores), sequential execution and all graph optimisations, once without
thread spinning (`onnxruntime`, the row the ratios use: robust on a shared machine) and once with
it (`onnxruntime_spin`, ONNX Runtime's default, best on an idle machine). The machine's load
average is printed: numbers from a loaded machine are not comparable with an idle one. The
measurements go to the run's record (`--record`, default `benchmarks/results/speed_inference.json`).

Examples:
    python -m benchmarks.speed.inference                                  # convnet at 64 px
    python -m benchmarks.speed.inference --backbone resnet50 --image-size 224 --batch-size 16
"""

import argparse
import os
import platform
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np

from benchmarks.records import add_record_option, write_record


def build_model(args):
    import keras

    from keras_dml import backbones
    from keras_dml.models import EmbeddingModel

    keras.utils.set_random_seed(0)
    backbone = backbones.get(args.backbone, input_shape=(args.image_size, args.image_size, 3))
    return EmbeddingModel(backbone, embedding_dim=args.embedding_dim, num_learners=args.learners)


def make_runners(model, workdir, threads):
    """Returns {name: callable(images float32) -> embeddings} for the three runtimes."""
    import onnxruntime as ort
    import tensorflow as tf

    from keras_dml.export import export_onnx, export_saved_model

    saved_model_path = os.path.join(workdir, "saved_model")
    onnx_path = os.path.join(workdir, "model.onnx")
    export_saved_model(model, saved_model_path, atol=1e-4)
    export_onnx(model, onnx_path, atol=1e-4)

    serving = tf.saved_model.load(saved_model_path).signatures["serving_default"]
    sessions = {}
    for name, spinning in (("onnxruntime", False), ("onnxruntime_spin", True)):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Busy-waiting worker threads win on an idle machine and lose on a shared one.
        options.add_session_config_entry("session.intra_op.allow_spinning", str(int(spinning)))
        sessions[name] = ort.InferenceSession(
            onnx_path, sess_options=options, providers=["CPUExecutionProvider"]
        )
    runners = {
        "keras": lambda x: np.asarray(model.predict_on_batch(x)),
        "tf_saved_model": lambda x: serving(images=tf.constant(x))["embedding"].numpy(),
    }
    for name, session in sessions.items():
        runners[name] = lambda x, s=session: s.run(["embedding"], {"images": x})[0]
    return runners


def interleaved_times(runners, images, runs, warmup):
    """Seconds per call for each runner, measured round-robin."""
    for runner in runners.values():
        for _ in range(warmup):
            runner(images)
    times = {name: [] for name in runners}
    for _ in range(runs):
        for name, runner in runners.items():
            start = time.perf_counter()
            runner(images)
            times[name].append(time.perf_counter() - start)
    return times


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backbone", default="convnet", help="backbone name (default convnet)")
    parser.add_argument("--image-size", type=int, default=None, help="64 (convnet) / 224")
    parser.add_argument("--embedding-dim", type=int, default=128)
    parser.add_argument("--learners", type=int, default=4, help="number of learners (4)")
    parser.add_argument("--batch-size", type=int, default=64, help="throughput batch (64)")
    parser.add_argument("--latency-runs", type=int, default=50)
    parser.add_argument("--throughput-runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    add_record_option(parser, "speed_inference.json")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.image_size is None:
        args.image_size = 64 if args.backbone == "convnet" else 224

    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    import onnxruntime as ort

    model = build_model(args)
    rng = np.random.default_rng(0)
    shape = (args.image_size, args.image_size, 3)
    batch = rng.integers(0, 256, (args.batch_size, *shape)).astype("float32")
    single = batch[:1]

    with tempfile.TemporaryDirectory() as workdir:
        runners = make_runners(model, workdir, args.threads)
        expected = runners["keras"](batch)
        parity = {name: float(np.abs(run(batch) - expected).max()) for name, run in runners.items()}
        latency = interleaved_times(runners, single, args.latency_runs, args.warmup)
        throughput = interleaved_times(runners, batch, args.throughput_runs, 1)

    print(
        f"EmbeddingModel({args.backbone}, {args.image_size} px, D={args.embedding_dim}, "
        f"{args.learners} learners, {model.count_params():,} params)"
    )
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores visible, "
        f"threads={args.threads}, load average {os.getloadavg()[0]:.1f}; "
        f"tensorflow {tf.__version__}, onnxruntime {ort.__version__}"
    )
    header = (
        f"{'runtime':<16}{'lat b=1 med ms':>16}{'p90 ms':>10}"
        f"{f'thr b={args.batch_size} img/s':>18}{'max|diff| vs keras':>20}"
    )
    print(header)
    rates = {}
    for name in runners:
        lat = sorted(latency[name])
        p90 = lat[min(len(lat) - 1, int(0.9 * len(lat)))]
        rates[name] = args.batch_size / statistics.median(throughput[name])
        print(
            f"{name:<16}{1e3 * statistics.median(lat):>16.2f}{1e3 * p90:>10.2f}"
            f"{rates[name]:>18.1f}{parity[name]:>20.2e}"
        )
    latency_ratio = statistics.median(latency["tf_saved_model"]) / statistics.median(
        latency["onnxruntime"]
    )
    print(
        f"onnxruntime / tf_saved_model throughput: "
        f"{rates['onnxruntime'] / rates['tf_saved_model']:.2f}x; "
        f"onnxruntime / keras: {rates['onnxruntime'] / rates['keras']:.2f}x; "
        f"latency ratio tf_saved_model / onnxruntime: "
        f"{latency_ratio:.2f}x"
    )
    speed_up = rates["onnxruntime"] / rates["tf_saved_model"]
    row = {
        "what": f"ONNX Runtime vs TF SavedModel throughput, batch {args.batch_size} "
        f"({args.backbone} {args.image_size} px)",
        "result": f"{speed_up:.2f}x (latency at batch 1: "
        f"{1e3 * statistics.median(latency['onnxruntime']):.2f} vs "
        f"{1e3 * statistics.median(latency['tf_saved_model']):.2f} ms); parity "
        f"{parity['onnxruntime']:.1e}",
        "target": ">= 1.3x",
    }
    measured = {
        "throughput_images_per_second": rates,
        "median_latency_seconds": {n: statistics.median(t) for n, t in latency.items()},
        "max_abs_difference_to_keras": parity,
        "throughput_ratio_onnxruntime_to_saved_model": speed_up,
    }
    write_record(args.record, "speed.inference", argv, measured, [row])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
