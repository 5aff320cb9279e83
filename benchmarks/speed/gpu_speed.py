"""GPU training speed at 224 px: keras-dml on JAX against PyTorch + pytorch-metric-learning.

Training images/s of ResNet-50 at 224 px for the baseline and every method,
keras-dml on Keras' JAX backend (no TensorFlow on the GPU machines) against a PyTorch training loop
with pytorch-metric-learning's margin loss and distance-weighted miner (the keras-dml baseline's
`margin` loss: margin 0.2, beta 1.2, the same miner), with the same architecture (torchvision's
ResNet-50, the v1.5 that keras-dml's `resnet50` builds with `variant="v1.5"`), batch, embedding
size and precision (bfloat16 autocast against Keras' `mixed_bfloat16`). Both sides train on random
images held in memory, so the figures are the training steps' own speed.

keras-dml's side is `benchmarks.speed.backend_speed --dataset synthetic` (its `steady` figure:
the steps of the second epoch); PyTorch's is `pml_worker` below, timed over the same number of steps
after the same warm-up. The record holds the device, driver and library versions with each figure
(`nvidia-smi`, `jax.devices()`, `torch.version.cuda`). Target: keras-dml's baseline at
least as fast as PML's; each ensemble's cost is reported relative to keras-dml's own baseline.

Usage (on the GPU machine; the second line is a CPU check at a tiny size):
    python -m benchmarks.speed.gpu_speed --batch-size 128 --steps 30
    python -m benchmarks.speed.gpu_speed --backbone convnet --image-size 32 --steps 3 \
        --precision float32
"""

import argparse
import json
import shutil
import subprocess
import sys
import time

from benchmarks.records import add_record_option, write_record
from benchmarks.speed.backend_speed import ROWS, run_one

RESULT_PREFIX = "PML-SPEED "
# Keras dtype policy -> torch autocast dtype (None: float32, no autocast).
AUTOCAST = {"float32": None, "mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backbone", default="resnet50")
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--m-per-class", type=int, default=4)
    parser.add_argument("--embedding-dim", type=int, default=512)
    parser.add_argument("--steps", type=int, default=30, help="timed steps (default 30)")
    parser.add_argument(
        "--precision", default="mixed_bfloat16", choices=sorted(AUTOCAST), help="both sides"
    )
    parser.add_argument("--rows", nargs="+", default=list(ROWS), help="keras-dml rows")
    parser.add_argument(
        "--keras-backend",
        default="jax",
        choices=("jax", "torch", "tensorflow"),
        help="Keras backend of keras-dml's side (default jax)",
    )
    parser.add_argument("--output", default="runs/gpu_speed", help="folder of the keras runs")
    parser.add_argument("--pml-worker", action="store_true", help=argparse.SUPPRESS)
    add_record_option(parser, "gpu_speed.json")
    return parser


def pml_model(backbone, image_size, embedding_dim):
    """The PyTorch network: torchvision's ResNet-50 (v1.5) or a translated plain keras-dml
    backbone, global average pooling and a linear embedding."""
    import torch

    if backbone == "resnet50":
        try:
            import torchvision
        except ImportError as error:
            raise SystemExit(
                "PyTorch's side needs torchvision for ResNet-50: pip install torchvision"
            ) from error
        net = torchvision.models.resnet50(weights=None)
        net.fc = torch.nn.Linear(net.fc.in_features, embedding_dim)
        return net
    from benchmarks.accuracy.torch_reference import EmbeddingNet, translate_backbone
    from keras_dml import backbones

    module, channels = translate_backbone(
        backbones.get(backbone, input_shape=(image_size, image_size, 3))
    )
    return EmbeddingNet(module, channels, embedding_dim)


def pml_worker(args):
    """Times PyTorch + PML training steps on random images; prints one JSON line."""
    import numpy as np
    import torch
    from pytorch_metric_learning import losses, miners

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    net = pml_model(args.backbone, args.image_size, args.embedding_dim).to(device)
    net = net.to(memory_format=torch.channels_last)
    loss_fn = losses.MarginLoss(margin=0.2, nu=0, beta=1.2).to(device)
    miner = miners.DistanceWeightedMiner(cutoff=0.5, nonzero_loss_cutoff=1.4)
    optimizer = torch.optim.Adam(list(net.parameters()) + list(loss_fn.parameters()), lr=1e-4)
    batch, size = args.batch_size, args.image_size
    images = torch.randint(0, 256, (batch, 3, size, size), device=device).float()
    images = images.contiguous(memory_format=torch.channels_last)
    labels = torch.as_tensor(np.arange(batch) // args.m_per_class, device=device)
    dtype = AUTOCAST[args.precision]
    autocast_dtype = getattr(torch, dtype) if dtype else torch.float32

    def step():
        with torch.autocast(device, dtype=autocast_dtype, enabled=dtype is not None):
            embeddings = net(images)
        embeddings = torch.nn.functional.normalize(embeddings.float(), dim=1)
        loss = loss_fn(embeddings, labels, miner(embeddings, labels))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss

    def synchronize():
        if device == "cuda":
            torch.cuda.synchronize()

    for _ in range(3):  # warm-up: cuDNN autotuning, allocator
        step()
    synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    float(loss.detach())  # waits for the last step (a detached read: no autograd warning)
    synchronize()
    seconds = time.perf_counter() - start
    result = {
        "images_per_second": args.steps * batch / seconds,
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def run_pml(args, argv):
    command = [sys.executable, "-m", "benchmarks.speed.gpu_speed", *argv, "--pml-worker"]
    result = subprocess.run(command, capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if result.returncode != 0 or not lines:
        tail = " | ".join(result.stderr.strip().splitlines()[-3:])
        raise SystemExit(f"PyTorch + PML failed (exit {result.returncode}): {tail}")
    return json.loads(lines[-1][len(RESULT_PREFIX) :])


def gpu_description():
    """`nvidia-smi`'s GPU name and driver, or `None` where there is none."""
    if shutil.which("nvidia-smi") is None:
        return None
    query = ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]
    result = subprocess.run(query, capture_output=True, text=True)
    return result.stdout.strip() or None


def keras_args(args):
    """The `backend_speed.py` options of keras-dml's side."""
    budget = {
        "backbone": args.backbone,
        "image_size": args.image_size,
        "batch_size": args.batch_size,
        "m_per_class": args.m_per_class,
        "embedding_dim": args.embedding_dim,
    }
    return argparse.Namespace(
        dataset="synthetic",
        steps=args.steps,
        precision=args.precision,
        set=[f"{key}={value}" for key, value in budget.items()],
        classes=None,
        output=args.output,
    )


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.pml_worker:
        pml_worker(args)
        return
    argv = sys.argv[1:] if argv is None else list(argv)
    pml = run_pml(args, [word for word in argv if word != "--pml-worker"])
    keras_side = {row: run_one(keras_args(args), args.keras_backend, row) for row in args.rows}
    baseline = keras_side.get("baseline/margin")
    print(f"PyTorch + PML baseline: {pml['images_per_second']:.1f} images/s on {pml['device']}")
    rows = []
    for row, result in keras_side.items():
        rate = result["steady"]
        line = f"{row:<18} keras-dml ({args.keras_backend}) {rate:9.1f} images/s"
        if baseline is not None:
            line += f", {rate / baseline['steady']:.2f}x keras-dml's baseline"
        print(line)
    if baseline is not None:
        ratio = baseline["steady"] / pml["images_per_second"]
        rows.append(
            {
                "what": f"keras-dml baseline ({args.keras_backend}) / PyTorch + PML, "
                f"{args.backbone} {args.image_size} px, batch {args.batch_size}, "
                f"{args.precision}",
                "result": f"{ratio:.2f}x",
                "target": ">= 1.00x",
            }
        )
        for row, result in keras_side.items():
            if row != "baseline/margin":
                rows.append(
                    {
                        "what": f"{row} / keras-dml baseline, training images/s",
                        "result": f"{result['steady'] / baseline['steady']:.2f}x",
                        "target": "reported",
                    }
                )
    write_record(
        args.record,
        "speed.gpu_speed",
        argv,
        {"pml": pml, "keras_dml": keras_side},
        rows,
        gpu=gpu_description(),
        keras_backend=args.keras_backend,
        precision=args.precision,
    )


if __name__ == "__main__":
    main()
