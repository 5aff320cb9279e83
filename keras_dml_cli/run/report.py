"""`keras-dml report`: the HTML report of a run folder.

Its arguments are defined in `keras_dml_cli.arguments.report` (no Keras); this module is loaded
when `report` runs.
"""

from keras_dml.visualization.report import describe_report, write_report

__all__ = ["run_report"]


def run_report(args):
    """Runs `keras-dml report`: writes the page and prints where it is.

    Args:
        args: `argparse.Namespace` of the `report` sub-command.

    Returns:
        int, the exit code (0).
    """
    path = write_report(
        args.run_dir,
        output=args.output,
        num_queries=args.queries,
        max_points=args.points,
        k=args.k,
    )
    print(describe_report(path, args.run_dir))
    return 0
