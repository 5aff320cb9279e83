"""Benchmark of `keras_dml.evaluation.evaluate` on SOP-sized embeddings against a naive reference.

Data: 60,502 x 128 float32 embeddings with Stanford-Online-Products-like labels (11,316 classes
of 2-12 images, seeded); every embedding is its class centre plus Gaussian noise, so the metrics
are far from 0 and 1. Ours: full `evaluate` with Recall@{1,10,100,1000}, MAP@R, R-Precision and
NMI. Naive: exact NumPy with a full-row argsort per query chunk and per-query Python loops, and
NMI from a plain contingency table over a rerun of the same k-means, on the same data in the
same process. Printed: metric values side by side with the maximum absolute difference of the
retrieval metrics, wall time, the speed ratio and peak memory (RSS sampled every 10 ms,
`getrusage` max RSS, optional tracemalloc). The run's record (`--record`, default
`benchmarks/results/speed_evaluation.json`) holds the time, the peak memory and the metrics.

Run:
    python -m benchmarks.speed.evaluation                       # full size, backend auto
    python -m benchmarks.speed.evaluation --num-samples 5000    # small, for CI
    python -m benchmarks.speed.evaluation --backend faiss --skip-naive
"""

import argparse
import os
import resource
import sys
import threading
import time
import tracemalloc

import numpy as np

from benchmarks.records import add_record_option, write_record
from keras_dml.evaluation import evaluate, lloyd_kmeans

RECALL_AT = (1, 10, 100, 1000)
RETRIEVAL_KEYS = [f"recall@{K}" for K in RECALL_AT] + ["map@r", "r_precision"]


def sop_like_data(num_samples=60502, num_classes=11316, dim=128, noise=0.15, seed=0):
    """Labels with 2-12 images per class summing to `num_samples`; centre + noise embeddings."""
    rng = np.random.default_rng(seed)
    num_classes = min(num_classes, num_samples // 2)
    if not 2 * num_classes <= num_samples <= 12 * num_classes:
        raise ValueError("num_samples must be within [2, 12] x num_classes.")
    # Truncated geometric sizes over 2..12 (most classes small, a tail up to 12, like SOP) with
    # the ratio set so the mean matches, then +-1 corrections to hit num_samples exactly.
    support = np.arange(2, 13)
    ratios = np.linspace(0.01, 1.5, 300)
    means = [(support * r ** (support - 2)).sum() / (r ** (support - 2)).sum() for r in ratios]
    ratio = ratios[np.argmin(np.abs(np.array(means) - num_samples / num_classes))]
    probabilities = ratio ** (support - 2) / (ratio ** (support - 2)).sum()
    sizes = rng.choice(support, size=num_classes, p=probabilities)
    while sizes.sum() != num_samples:
        step = 1 if sizes.sum() < num_samples else -1
        room = np.flatnonzero((sizes < 12) if step > 0 else (sizes > 2))
        picks = rng.choice(room, size=min(room.size, abs(num_samples - sizes.sum())), replace=False)
        sizes[picks] += step
    labels = rng.permutation(np.repeat(np.arange(num_classes), sizes))
    centres = rng.normal(size=(num_classes, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    embeddings = centres[labels] + noise * rng.normal(size=(labels.size, dim)).astype(np.float32)
    return embeddings.astype(np.float32), labels


def naive_evaluate(embeddings, labels, recall_at, chunk=256, kmeans_niter=20, seed=0):
    """Exact reference: full-row argsort per chunk, plain loops per query, plain NMI."""
    x = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    n = x.shape[0]
    class_sizes = np.bincount(labels)
    hits = dict.fromkeys(recall_at, 0)
    map_sum = rp_sum = 0.0
    valid = 0
    for start in range(0, n, chunk):
        sims = x[start : start + chunk] @ x.T
        for row in range(sims.shape[0]):
            sims[row, start + row] = -np.inf  # the query itself, by index
        order = np.argsort(-sims, axis=1, kind="stable")  # ties -> lower index first
        for row in range(sims.shape[0]):
            query = start + row
            neighbour_labels = labels[order[row, : n - 1]]
            relevant = neighbour_labels == labels[query]
            for K in recall_at:
                hits[K] += bool(relevant[:K].any())
            R = class_sizes[labels[query]] - 1
            if R == 0:
                continue
            valid += 1
            found, precision_sum = 0, 0.0
            for position in range(R):
                if relevant[position]:
                    found += 1
                    precision_sum += found / (position + 1)
            map_sum += precision_sum / R
            rp_sum += found / R
    result = {f"recall@{K}": hits[K] / n for K in recall_at}
    result["map@r"] = map_sum / valid
    result["r_precision"] = rp_sum / valid
    # k-means is not exact-comparable across implementations; the naive side re-runs our
    # k-means (same seed) and computes NMI with a plain-NumPy contingency-table formula.
    assignments, _ = lloyd_kmeans(x, np.unique(labels).size, kmeans_niter, None, seed)
    result["nmi"] = naive_nmi(labels, assignments)
    return result


def naive_nmi(labels, assignments):
    """NMI = 2 I(Y; C) / (H(Y) + H(C)) from a dense contingency table (arithmetic mean)."""
    _, y = np.unique(labels, return_inverse=True)
    _, c = np.unique(assignments, return_inverse=True)
    table = np.zeros((y.max() + 1, c.max() + 1))
    np.add.at(table, (y, c), 1)
    p = table / table.sum()
    py, pc = p.sum(axis=1), p.sum(axis=0)
    nz = p > 0
    mutual = (p[nz] * np.log(p[nz] / np.outer(py, pc)[nz])).sum()
    entropy_y = -(py[py > 0] * np.log(py[py > 0])).sum()
    entropy_c = -(pc[pc > 0] * np.log(pc[pc > 0])).sum()
    return float(2 * mutual / (entropy_y + entropy_c))


def rss_bytes():
    import psutil

    return psutil.Process().memory_info().rss


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(fn):
    """Runs fn(); returns (result, seconds, peak RSS sampled every 10 ms in bytes or None).

    Also prints the process CPU time of the call: on a machine shared with other jobs the wall
    time grows with the load, the CPU time much less.
    """
    cpu_start = cpu_seconds()
    try:
        return _measure(fn)
    finally:
        print(
            f"       (process CPU time {cpu_seconds() - cpu_start:.1f} s, load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
        )


def _measure(fn):
    try:
        rss_bytes()
    except ImportError:
        start = time.perf_counter()
        return fn(), time.perf_counter() - start, None
    peak = [rss_bytes()]
    done = threading.Event()

    def sample():
        while not done.wait(0.01):
            peak[0] = max(peak[0], rss_bytes())

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    done.set()
    thread.join()
    return result, seconds, max(peak[0], rss_bytes())


def max_rss_bytes():
    scale = 1 if sys.platform == "darwin" else 1024  # Linux reports KiB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num-samples", type=int, default=60502)
    parser.add_argument("--num-classes", type=int, default=None, help="default: SOP ratio")
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--noise", type=float, default=0.15)
    parser.add_argument("--backend", default="auto", choices=["auto", "faiss", "numpy"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--metrics", default="recall,map@r,r_precision,nmi", help="comma-separated subset"
    )
    parser.add_argument("--skip-naive", action="store_true", help="only time our evaluate")
    parser.add_argument("--tracemalloc", action="store_true", help="rerun ours under tracemalloc")
    add_record_option(parser, "speed_evaluation.json")
    return parser


def record_run(args, argv, data, ours, seconds, peak, naive=None):
    """Writes the run's record: its time, peak RSS, metrics and, with the naive loop, the
    largest difference of the retrieval metrics."""
    num_samples, dim, num_classes, recall_at = data
    diff = None
    if naive is not None:
        diff = max(abs(ours[k] - naive[k]) for k in RETRIEVAL_KEYS if k in naive)
    metrics = ", ".join(args.metrics.split(",")).replace(
        "recall", f"R@{{{','.join(map(str, recall_at))}}}"
    )
    result = f"{seconds:.1f} s" + ("" if peak is None else f", peak RSS {peak / 2**30:.2f} GiB")
    if diff is not None:
        result += f" (largest difference to the naive exact loop {diff:.1g})"
    row = {
        "what": f"evaluation, {num_samples:,} x {dim}, {num_classes:,} classes, {metrics}",
        "result": result,
        "target": "<= 20 s, <= 3 GiB (at 60,502 x 128)",
    }
    measured = {
        "seconds": seconds,
        "peak_rss_bytes": peak,
        "metrics": {k: v if isinstance(v, str) else float(v) for k, v in ours.items()},
        "naive_metrics": None if naive is None else {k: float(v) for k, v in naive.items()},
        "max_retrieval_difference": diff,
    }
    write_record(args.record, "speed.evaluation", argv, measured, [row])


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    num_classes = args.num_classes or max(1, round(args.num_samples * 11316 / 60502))
    embeddings, labels = sop_like_data(
        args.num_samples, num_classes, args.dim, args.noise, args.seed
    )
    recall_at = tuple(K for K in RECALL_AT if labels.size > K)
    metrics = tuple(args.metrics.split(","))
    if not args.skip_naive and metrics != ("recall", "map@r", "r_precision", "nmi"):
        parser.error("--metrics needs --skip-naive (the comparison uses every metric)")
    print(
        f"data: {embeddings.shape[0]} x {embeddings.shape[1]} float32, "
        f"{np.unique(labels).size} classes, sizes {np.bincount(labels).min()}-"
        f"{np.bincount(labels).max()}, backend={args.backend}"
    )

    data = (embeddings.shape[0], embeddings.shape[1], np.unique(labels).size, recall_at)
    base_rss = rss_bytes() if _has_psutil() else None
    ours, ours_seconds, ours_peak = measure(
        lambda: evaluate(
            embeddings,
            labels,
            recall_at=recall_at,
            metrics=metrics,
            backend=args.backend,
            seed=args.seed,
        )
    )
    print(f"ours : {ours_seconds:.2f} s wall")
    if ours_peak is not None:
        print(
            f"ours : peak RSS {ours_peak / 2**30:.3f} GiB sampled during evaluate "
            f"(+{(ours_peak - base_rss) / 2**30:.3f} GiB over {base_rss / 2**30:.3f} GiB before)"
        )
    print(f"ours : process max RSS so far (getrusage) {max_rss_bytes() / 2**30:.3f} GiB")
    if args.tracemalloc:
        tracemalloc.start()
        evaluate(
            embeddings,
            labels,
            recall_at=recall_at,
            metrics=metrics,
            backend=args.backend,
            seed=args.seed,
        )
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"ours : tracemalloc peak {traced_peak / 2**30:.3f} GiB (NumPy/Python allocations; "
            "faiss's C++ buffers are not traced)"
        )
    if args.skip_naive:
        for key, value in ours.items():
            print(f"  {key:>22}: {value}")
        record_run(args, argv, data, ours, ours_seconds, ours_peak)
        return ours
    naive, naive_seconds, _ = measure(
        lambda: naive_evaluate(embeddings, labels, recall_at, seed=args.seed)
    )
    print(
        f"naive: {naive_seconds:.2f} s wall   speed ratio naive/ours: "
        f"{naive_seconds / ours_seconds:.1f}x"
    )
    print(f"  {'metric':>22}  {'ours':>10}  {'naive':>10}")
    for key in [f"recall@{K}" for K in recall_at] + ["map@r", "r_precision", "nmi"]:
        print(f"  {key:>22}  {ours[key]:10.6f}  {naive[key]:10.6f}")
    retrieval = [k for k in RETRIEVAL_KEYS if k in naive]
    diff = max(abs(ours[k] - naive[k]) for k in retrieval)
    print(f"max abs diff over retrieval metrics: {diff:.3g}")
    print(
        "nmi abs diff (same k-means rerun, NMI from a plain contingency table): "
        f"{abs(ours['nmi'] - naive['nmi']):.3g}"
    )
    print(f"num_queries={ours['num_queries']} num_excluded_queries={ours['num_excluded_queries']}")
    record_run(args, argv, data, ours, ours_seconds, ours_peak, naive)
    return ours, naive


def _has_psutil():
    try:
        rss_bytes()
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
