"""Evaluation at scale: exact and approximate search over N x 128 embeddings, against the compute
bound measured in the same run.

Data: N x 128 float32 embeddings, `--num-classes` classes (default N / 10) of random sizes, each
embedding its class centre plus Gaussian noise, L2-normalised, generated chunk by chunk into a
memory-mapped .npy file (so the data never sits in RAM twice) and evaluated from that memory map.

Measured, in this order, in one process:
1. compute bound: the FLOPs of exact search alone, a plain float32 matrix product N x D @ D x N
   in the same blocks the exact search uses (`np.matmul` into a preallocated buffer, BLAS on all
   cores), nothing else; measured before and again after step 2, and averaged, so that a change
   of the machine's load during the run weighs on both sides of the ratio;
2. `evaluate(..., index="exact")`: Recall@K, MAP@R, R-Precision (NMI is left out: k-means with
   N / 10 centroids costs more than the search itself and is not what this measures);
3. for each approximate index asked for (`--approximate ivf,hnsw`): `evaluate(..., index=name)`
   with its build time included, its metric error against exact on a 1,000-query sample
   (reported by `evaluate`), and the metric difference against the full exact run.
For each: wall time, peak RSS (psutil, sampled every 10 ms) and the load average (the machine
is shared: the ratio exact / bound is what to compare, absolute times move with the load).
The run's record (`--record`, default `benchmarks/results/speed_evaluation_scale_<N>.json`)
holds all of it, one speed-table row for the exact search and one per approximate index.

Run:
    python -m benchmarks.speed.evaluation_scale --num-samples 1000000          # the target size
    # the first 50,000 rows query the other 950,000 (a twentieth of the all-rows work):
    python -m benchmarks.speed.evaluation_scale --num-samples 1000000 --num-queries 50000
    python -m benchmarks.speed.evaluation_scale --num-samples 50000 --tile-size 16384   # tiled path
"""

import argparse
import os
import resource
import tempfile
import threading
import time

import numpy as np

from benchmarks.records import RESULTS, write_record
from keras_dml.evaluation import evaluate
from keras_dml.search import EmbeddingIndex
from keras_dml.search.exact_topk import plan_blocks


def make_data(path, num_samples, num_classes, dim, noise, seed, chunk=65536):
    """Writes normalised centre + noise embeddings to a .npy memory map; returns it and labels."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, num_classes, size=num_samples)
    centres = rng.normal(size=(num_classes, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(num_samples, dim))
    for start in range(0, num_samples, chunk):
        rows = labels[start : start + chunk]
        x = centres[rows] + noise * rng.normal(size=(rows.size, dim)).astype(np.float32)
        out[start : start + rows.size] = x / np.linalg.norm(x, axis=1, keepdims=True)
    out.flush()
    del out
    return np.load(path, mmap_mode="r"), labels


def compute_bound(queries, gallery, tile_size=None):
    """Seconds of the exact search's matrix products alone, in its own blocks."""
    chunk, tile = plan_blocks(gallery.shape[0], tile_size=tile_size)
    out = np.empty((chunk, min(tile, gallery.shape[0])), np.float32)
    start_time = time.perf_counter()
    for start in range(0, queries.shape[0], chunk):
        block = np.asarray(queries[start : start + chunk])
        for ref_start in range(0, gallery.shape[0], tile):
            refs = gallery[ref_start : ref_start + tile]
            np.matmul(block, refs.T, out=out[: block.shape[0], : refs.shape[0]])
    return time.perf_counter() - start_time, chunk, tile


def split_queries(x, labels, num_queries):
    """`(gallery, gallery_labels, query_kwargs)`: all rows, or the first rows as queries.

    With `num_queries`, the first `num_queries` rows query the other rows (the query/gallery
    protocol): each query then costs what it costs in the all-rows protocol (one pass over a
    gallery of nearly N rows), so the full-size time is the measured time x N^2 / (Q (N - Q)).
    """
    if not num_queries:
        return x, labels, {}
    queries = {"query_embeddings": x[:num_queries], "query_labels": labels[:num_queries]}
    return x[num_queries:], labels[num_queries:], queries


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measured(fn):
    """(result, wall seconds, peak RSS bytes sampled every 10 ms, load average after, process
    CPU seconds).

    Also prints the process CPU time of the call: on a shared machine the wall time grows with
    the other jobs' load, the CPU time much less.
    """
    import psutil

    process = psutil.Process()
    peak = [process.memory_info().rss]
    done = threading.Event()

    def sample():
        while not done.wait(0.01):
            peak[0] = max(peak[0], process.memory_info().rss)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    start, cpu_start = time.perf_counter(), cpu_seconds()
    result = fn()
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    print(f"        (process CPU time {cpu:.1f} s)", flush=True)
    done.set()
    thread.join()
    return result, seconds, max(peak[0], process.memory_info().rss), os.getloadavg()[0], cpu


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num-samples", type=int, default=1_000_000)
    parser.add_argument("--num-classes", type=int, help="default: num_samples / 10")
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--noise", type=float, default=0.12)
    parser.add_argument("--recall-at", default="1,2,4,8", help="comma-separated K values")
    parser.add_argument("--approximate", default="ivf,hnsw", help="approximate indexes to run")
    parser.add_argument("--skip-exact", action="store_true", help="approximate indexes only")
    parser.add_argument(
        "--tile-size",
        type=int,
        help="references per block: tiles (the large-gallery path, 16384 above 131,072 rows) "
        "at any size; default: the library's own plan",
    )
    parser.add_argument(
        "--num-queries",
        type=int,
        help="query only the first rows, against the other rows (the search time of the full "
        "all-rows run is extrapolated; peak RSS is measured with the full gallery)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--record",
        help="JSON record of the run (default "
        "benchmarks/results/speed_evaluation_scale_<num-samples>.json)",
    )
    return parser


def exact_row(args, data, bound, exact, full_size):
    """The speed-table row of the exact search against its compute bound."""
    seconds, bound_seconds = exact["seconds"], bound["seconds"]
    result = (
        f"{seconds:.1f} s = {seconds / bound_seconds:.2f}x the compute bound measured in the same "
        f"run ({bound_seconds:.1f} s of matmul alone; CPU time {exact['cpu_seconds']:.1f} s vs "
        f"{bound['cpu_seconds']:.1f} s: {exact['cpu_seconds'] / bound['cpu_seconds']:.2f}x), "
        f"peak RSS {exact['peak_rss_bytes'] / 2**30:.2f} GiB "
        f"({bound['peak_rss_bytes'] / 2**30:.2f} GiB during the bare matmul), load average "
        f"{exact['load_average']:.0f}"
    )
    if args.num_queries:
        result += f"; the all-rows run is {full_size:.1f}x this work (extrapolated, not run)"
    queries = (
        f"; its first {args.num_queries:,} rows query the other {data['gallery']:,}"
        if args.num_queries
        else ", all rows"
    )
    return {
        "what": f"evaluation at scale, exact (blocks {bound['blocks'][0]:,} x "
        f"{bound['blocks'][1]:,}): {args.num_samples:,} x {args.dim}, {data['classes']:,} "
        f"classes{queries}, R@{{{args.recall_at}}}, MAP@R, R-Prec",
        "result": result,
        "target": "<= 1.5x, <= 4 GiB (at 1,000,000 x 128)",
    }


def approximate_row(name, entry):
    """The speed-table row of one approximate index: its time and metric errors."""
    errors = ", ".join(
        f"{key[len('approx_error_') :]} {value:+.3f}"
        for key, value in entry["report"].items()
        if key.startswith("approx_error_")
    )
    result = (
        f"{entry['seconds']:.1f} s with build; neighbour recall "
        f"{entry['report'].get('approx_neighbor_recall', float('nan')):.2f} (top-"
        f"{entry['report'].get('approx_neighbor_k', '?')}); error on a "
        f"{entry['report'].get('approx_sample_size', '?'):,}-query sample: {errors}"
    )
    if entry.get("difference_to_exact"):
        result += " (against the full exact run: " + ", ".join(
            f"{k} {v:+.3f}" for k, v in entry["difference_to_exact"].items()
        )
        result += ")"
    return {
        "what": f"faiss {name} (defaults) on the run above",
        "result": result,
        "target": "metric error reported",
    }


def main(argv=None):
    args = build_parser().parse_args(argv)
    exact_index = "exact" if args.tile_size is None else EmbeddingIndex(tile_size=args.tile_size)
    num_classes = args.num_classes or max(1, args.num_samples // 10)
    recall_at = tuple(int(k) for k in args.recall_at.split(","))
    metrics = ("recall", "map@r", "r_precision")
    print(
        f"machine: {os.cpu_count()} CPUs, load average before {os.getloadavg()[0]:.1f}; "
        f"data: {args.num_samples} x {args.dim} float32, {num_classes} classes"
    )
    with tempfile.TemporaryDirectory() as folder:
        x, labels = make_data(
            os.path.join(folder, "embeddings.npy"),
            args.num_samples,
            num_classes,
            args.dim,
            args.noise,
            args.seed,
        )
        print(f"  class sizes {np.bincount(labels).min()}-{np.bincount(labels).max()}")
        gallery, gallery_labels, queries = split_queries(x, labels, args.num_queries)
        num_queries = args.num_queries or args.num_samples
        full_size = args.num_samples**2 / (num_queries * gallery.shape[0])
        if args.num_queries:
            print(
                f"  {num_queries} queries against the other {gallery.shape[0]} rows; a full "
                f"all-rows search is {full_size:.1f}x this work"
            )
        exact = None
        data = {"classes": num_classes, "gallery": int(gallery.shape[0])}
        record, rows = {"approximate": {}}, []
        if not args.skip_exact:
            # The bound is measured before and after the exact search and averaged, so a change
            # of load during the run falls on both sides of the ratio.
            query_rows = queries.get("query_embeddings", x)
            before = measured(lambda: compute_bound(query_rows, gallery, args.tile_size))
            (_, chunk, tile), _, _, load, _ = before
            flops = 2.0 * num_queries * gallery.shape[0] * args.dim
            print(
                f"compute bound (matmul only, blocks {chunk} x {tile}): {before[1]:.1f} s "
                f"({flops / before[1] / 1e9:.0f} GFLOP/s), peak RSS {before[2] / 2**30:.2f} GiB, "
                f"load {load:.1f}"
            )
            exact, seconds, rss, load, cpu = measured(
                lambda: evaluate(
                    gallery,
                    gallery_labels,
                    **queries,
                    recall_at=recall_at,
                    metrics=metrics,
                    normalize=False,
                    index=exact_index,
                )
            )
            after = measured(lambda: compute_bound(query_rows, gallery, args.tile_size))
            bound = (before[1] + after[1]) / 2
            bound_cpu = (before[4] + after[4]) / 2
            bound_rss = max(before[2], after[2])
            print(f"compute bound again: {after[1]:.1f} s; mean {bound:.1f} s, load {after[3]:.1f}")
            print(
                f"exact : {seconds:.1f} s = {seconds / bound:.2f}x the compute bound, "
                f"peak RSS {rss / 2**30:.2f} GiB, load {load:.1f}"
            )
            if args.num_queries:
                print(
                    f"        all-rows run, extrapolated: exact {seconds * full_size:.0f} s, "
                    f"compute bound {bound * full_size:.0f} s"
                )
            print(
                "        "
                + ", ".join(
                    f"{k}={v:.4f}"
                    for k, v in exact.items()
                    if "@" in k or "r" in k and isinstance(v, float)
                )
            )
            record["bound"] = {
                "seconds": bound,
                "cpu_seconds": bound_cpu,
                "peak_rss_bytes": bound_rss,
                "blocks": [chunk, tile],
                "runs_seconds": [before[1], after[1]],
            }
            record["exact"] = {
                "seconds": seconds,
                "cpu_seconds": cpu,
                "peak_rss_bytes": rss,
                "load_average": load,
                "metrics": {k: v for k, v in exact.items() if isinstance(v, float)},
            }
            rows.append(exact_row(args, data, record["bound"], record["exact"], full_size))
        for name in [n for n in args.approximate.split(",") if n]:
            result, seconds, rss, load, cpu = measured(
                lambda name=name: evaluate(
                    gallery,
                    gallery_labels,
                    **queries,
                    recall_at=recall_at,
                    metrics=metrics,
                    normalize=False,
                    index=name,
                )
            )
            print(
                f"{name:6s}: {seconds:.1f} s (build + search + exact sample), peak RSS "
                f"{rss / 2**30:.2f} GiB, load {load:.1f}"
            )
            for key, value in result.items():
                if key.startswith("approx_"):
                    print(f"        {key} = {value:.4g}")
            diffs = {}
            if exact is not None:
                diffs = {k: result[k] - exact[k] for k in exact if isinstance(exact[k], float)}
                print(
                    "        vs full exact run: "
                    + ", ".join(f"{k} {v:+.4f}" for k, v in diffs.items())
                )
            record["approximate"][name] = {
                "seconds": seconds,
                "cpu_seconds": cpu,
                "peak_rss_bytes": rss,
                "load_average": load,
                "report": {k: v for k, v in result.items() if k.startswith("approx_")},
                "difference_to_exact": diffs,
            }
            rows.append(approximate_row(name, record["approximate"][name]))
    path = args.record or os.path.join(RESULTS, f"speed_evaluation_scale_{args.num_samples}.json")
    write_record(path, "speed.evaluation_scale", argv, record, rows)
    return record


if __name__ == "__main__":
    main()
