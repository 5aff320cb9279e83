"""Cost of re-ranking in `evaluate`: each `rerank` method against none, side by side, one run.

Data: `--num-samples` x 128 float32 embeddings with SOP-like labels (classes of 2-12 images, centre
+ Gaussian noise; `sop_like_data` of `benchmarks/speed/evaluation.py`), evaluated leave-one-out
(every embedding queries all others) with Recall@{1,2,4,8}, MAP@R and R-Precision (NMI left out:
re-ranking does not change it). For each of none, `aqe`, `alpha_qe`, `dba` and `k_reciprocal`
(default parameters): wall time, process CPU time, peak RSS above the data (psutil, sampled every 10
ms), and the metrics. The machine may be shared: the load average is printed with each row.

Run:
    python -m benchmarks.speed.reranking --num-samples 100000
    python -m benchmarks.speed.reranking --num-samples 5000 --methods aqe,k_reciprocal   # quick
"""

import argparse
import json
import os
import time

from benchmarks.records import RESULTS, command_line, machine
from benchmarks.speed.evaluation import cpu_seconds, measure, rss_bytes, sop_like_data
from keras_dml.evaluation import evaluate

METHODS = ("aqe", "alpha_qe", "dba", "k_reciprocal")


def build_parser():
    """The command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num-samples", type=int, default=100000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--methods", default=",".join(METHODS), help="comma-separated")
    parser.add_argument("--output", help="JSON file (default benchmarks/results/reranking_N.json)")
    return parser


def main(argv=None):
    """Times `evaluate` without and with each re-ranking; prints and writes the rows."""
    args = build_parser().parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    embeddings, labels = sop_like_data(
        args.num_samples, args.num_samples * 11316 // 60502, args.dim
    )
    rows = []
    for method in [None, *methods]:
        cpu, before = cpu_seconds(), rss_bytes()
        result, seconds, peak = measure(
            lambda m=method: evaluate(
                embeddings, labels, metrics=("recall", "map@r", "r_precision"), rerank=m
            )
        )
        row = {
            "rerank": result.get("rerank", "none"),
            "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu_seconds() - cpu, 1),
            "rss_before_mb": round(before / 2**20),
            "peak_rss_mb": None if peak is None else round(peak / 2**20),
            "load_average": round(os.getloadavg()[0], 1),
            **{k: round(v, 4) for k, v in result.items() if k.startswith(("recall", "map", "r_p"))},
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    record = {
        "num_samples": args.num_samples,
        "dim": args.dim,
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": command_line("speed.reranking", argv),
        "machine": machine(),
        "rows": rows,
    }
    output = args.output or os.path.join(RESULTS, f"reranking_{args.num_samples}.json")
    with open(output, "w") as file:
        json.dump(record, file, indent=2)
        file.write("\n")
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
