"""`keras-dml report`'s arguments (the run: `keras_dml_cli.run.report`)."""


def add_report_parser(subparsers):
    """Adds the `report` sub-command to `keras-dml`'s sub-parsers."""
    parser = subparsers.add_parser(
        "report", help="write a run folder's HTML report (metrics, curves, retrieval, projection)"
    )
    parser.add_argument("run_dir", help="a run folder written by `keras-dml train`")
    parser.add_argument("--output", help="where to write the page (default RUN_DIR/report.html)")
    parser.add_argument("--queries", type=int, default=16, help="queries in the retrieval grid")
    parser.add_argument("--points", type=int, default=500, help="test images sampled")
    parser.add_argument("-k", type=int, default=5, help="neighbours per query")
