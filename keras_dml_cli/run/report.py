"""`keras-dml report`: the HTML report of a run folder."""

from keras_dml.visualization.report import describe_report, write_report

__all__ = ["run_report"]


def run_report(args):
    """Runs `keras-dml report`: writes the page, prints where it is, returns the exit code."""
    path = write_report(
        args.run_dir,
        output=args.output,
        num_queries=args.queries,
        max_points=args.points,
        k=args.k,
    )
    print(describe_report(path, args.run_dir))
    return 0
