"""Milvus Lite against keras-dml's exact search and faiss flat: insert and search N x 128
embeddings, recall@10 against exact search, time and peak RSS, side by side in one run.

Data: `make_data` of `benchmarks/speed/evaluation_scale.py` (normalised class centres plus noise,
memory-mapped). The first `--num-queries` rows query the whole gallery, top `--k`.

Measured, in this order, in one process (Milvus Lite runs inside it, so its memory is in the RSS):
1. keras-dml exact search: `EmbeddingIndex.from_embeddings` over the memory map (nothing to build);
2. faiss flat: `EmbeddingIndex(backend="flat")`, its build and search;
3. Milvus Lite (`--milvus-index`, FLAT by default): insert through `MilvusStore.write` (upserts of
   10,000 rows keyed by id, then a flush), the search of the queries (`MilvusStore.search`), and
   opening it as a `StoreIndex` (reading every id, which `search` needs to return rows).
Each step: wall time, peak RSS (psutil, sampled every 10 ms), recall@k against step 1.

Run:
    python -m benchmarks.scale_out.milvus_search --num-samples 1000000
    python -m benchmarks.scale_out.milvus_search --num-samples 20000 --num-queries 200   # quick
"""

import argparse
import os
import shutil
import tempfile

import numpy as np

from benchmarks.records import RESULTS, write_record
from benchmarks.speed.evaluation_scale import make_data, measured
from keras_dml.search import EmbeddingIndex
from keras_dml.stores import MilvusStore, StoreIndex

BATCH = 10000


def build_parser():
    """The command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num-samples", type=int, default=1000000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--num-queries", type=int, default=1000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--milvus-index", default="flat", choices=["flat", "hnsw", "ivf"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--record", help="JSON record (default benchmarks/results/scale_out_milvus_N.json)"
    )
    return parser


def recall(found, exact):
    """Share of each query's exact top-k rows that `found` `[Q, k]` holds."""
    return float(np.mean([np.intersect1d(f, e).size / e.size for f, e in zip(found, exact)]))


def step(name, fn, exact=None):
    """Runs `fn` (returns `(result, rows or None)`); the step's measurements."""
    (result, rows), seconds, peak, load, cpu = measured(fn)
    entry = {"seconds": round(seconds, 2), "cpu_seconds": round(cpu, 1)}
    entry.update(peak_rss_gib=round(peak / 2**30, 2), load_average=round(load, 1))
    if rows is not None and exact is not None:
        entry["recall"] = round(recall(rows, exact), 4)
    print(f"  {name}: {entry}", flush=True)
    return result, rows, entry


def built(x, backend):
    """An `EmbeddingIndex` over `x` with its backend built."""
    index = EmbeddingIndex.from_embeddings(x, backend=backend)
    index.backend  # noqa: B018 (builds it)
    return index


def insert(store, x):
    for start in range(0, x.shape[0], BATCH):
        ids = [f"{row:09d}" for row in range(start, min(start + BATCH, x.shape[0]))]
        store.write(ids, np.asarray(x[start : start + BATCH]), [""] * len(ids), ids)
    store.flush()
    return None, None


def machine_line(record):
    """The record's machine and date, in one line."""
    machine = record["machine"]
    return (
        f"machine: {machine['cpu']}, {machine['cores']} cores, {machine['memory_gib']} GiB, "
        f"load average {machine['load_average'][0]} at the end, {record['date']}"
    )


def summary_lines(record):
    """The lines the run prints at its end (the docs quote them)."""
    m = record["measured"]
    exact, flat, lite = m["exact_search"], m["faiss_flat_search"], m["milvus_search"]
    return [
        machine_line(record),
        f"{m['num_samples']:,} x {m['dim']}, {m['num_queries']:,} queries, top {m['k']}:",
        f"keras-dml exact search {exact['seconds']} s, peak RSS {exact['peak_rss_gib']} GiB",
        f"faiss flat: build {m['faiss_flat_build']['seconds']} s, search {flat['seconds']} s, "
        f"recall {flat['recall']}",
        f"Milvus Lite {m['milvus_index']}: insert {m['milvus_insert']['seconds']} s "
        f"({m['insert_rows_per_second']:,.0f} rows/s), search {lite['seconds']} s, recall "
        f"{lite['recall']}, open as StoreIndex {m['milvus_open']['seconds']} s, peak RSS "
        f"{m['milvus_insert']['peak_rss_gib']} GiB, {m['milvus_disk_gib']} GiB on disk",
        f"search time against keras-dml exact: Milvus Lite {m['milvus_vs_exact']}x, faiss flat "
        f"{m['faiss_vs_exact']}x",
    ]


def main(argv=None):
    """Measures the three searches side by side; prints and records them."""
    args = build_parser().parse_args(argv)
    folder = tempfile.mkdtemp(prefix="milvus_bench_")
    try:
        x, _ = make_data(
            os.path.join(folder, "x.npy"),
            args.num_samples,
            max(2, args.num_samples // 10),
            args.dim,
            0.3,
            args.seed,
        )
        queries, k = np.asarray(x[: args.num_queries]), args.k
        print(f"{args.num_samples:,} x {args.dim}, {len(queries)} queries, top {k}", flush=True)
        measured_values = {
            "num_samples": args.num_samples,
            "dim": args.dim,
            "num_queries": len(queries),
            "k": k,
            "milvus_index": args.milvus_index,
        }
        exact_index = EmbeddingIndex.from_embeddings(x)
        _, exact, entry = step(
            "keras-dml exact search",
            lambda: (None, exact_index.search_embeddings(queries, k)[0]),
        )
        measured_values["exact_search"] = entry
        flat, _, entry = step("faiss flat build", lambda: (built(x, "flat"), None))
        measured_values["faiss_flat_build"] = entry
        _, _, entry = step(
            "faiss flat search", lambda: (None, flat.search_embeddings(queries, k)[0]), exact
        )
        measured_values["faiss_flat_search"] = entry
        flat = None  # frees the faiss copy before Milvus Lite's step
        identity = {"dim": args.dim, "learner_slices": None, "fingerprint": [], "model": "-"}
        store = MilvusStore(os.path.join(folder, "bench.db")).prepare(identity, args.milvus_index)
        _, _, entry = step("Milvus Lite insert", lambda: insert(store, x))
        measured_values["milvus_insert"] = entry

        def search():
            ids, _ = store.search(queries, k, args.milvus_index)
            return None, np.array([[-1 if i is None else int(i) for i in row] for row in ids])

        _, _, measured_values["milvus_search"] = step("Milvus Lite search", search, exact)
        _, _, measured_values["milvus_open"] = step(
            "open as StoreIndex", lambda: (len(StoreIndex(store)), None)
        )
        store.close()
        disk = (
            sum(
                os.path.getsize(os.path.join(root, name))
                for root, _, names in os.walk(os.path.join(folder, "bench.db"))
                for name in names
            )
            if os.path.isdir(os.path.join(folder, "bench.db"))
            else os.path.getsize(os.path.join(folder, "bench.db"))
        )
        measured_values["milvus_disk_gib"] = round(disk / 2**30, 2)
        seconds = max(measured_values["exact_search"]["seconds"], 0.01)  # a tiny run rounds to 0
        measured_values["insert_rows_per_second"] = round(
            args.num_samples / measured_values["milvus_insert"]["seconds"]
        )
        measured_values["milvus_vs_exact"] = round(
            measured_values["milvus_search"]["seconds"] / seconds, 2
        )
        measured_values["faiss_vs_exact"] = round(
            measured_values["faiss_flat_search"]["seconds"] / seconds, 2
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    path = args.record or os.path.join(RESULTS, f"scale_out_milvus_{args.num_samples}.json")
    record = write_record(path, "scale_out.milvus_search", argv, measured_values)
    print("\n".join(summary_lines(record)))
    return record


if __name__ == "__main__":
    main()
