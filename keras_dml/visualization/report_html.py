"""The HTML pieces of a run report: inline images, tables, sections and the page."""

import base64
import datetime
import html
import os
import warnings

import numpy as np

from keras_dml.visualization._common import figure_png

REPORT_NAME = "report.html"
STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
code, pre { background: #f4f4f4; padding: 0.1em 0.3em; }
pre { padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 0.25em 0.7em; }
td.num { text-align: right; font-family: monospace; }
img { max-width: 100%; display: block; margin: 0.5em 0; }
p.note { color: #555; } p.error { color: #b00; font-weight: bold; }
"""


def image_html(figure, alt):
    """An <img> holding `figure` as an inline base64 PNG."""
    encoded = base64.b64encode(figure_png(figure)).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{encoded}">'


def table_html(rows, header):
    """A plain HTML table; floats shown with 4 decimals."""
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for row in rows:
        tds = []
        for value in row:
            if isinstance(value, float):
                tds.append(f'<td class="num">{value:.4f}</td>')
            else:
                tds.append(f"<td>{html.escape(str(value))}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return f"<table><tr>{cells}</tr>{''.join(body)}</table>"


def metrics_html(metrics, history, eval_every=1):
    """The test metrics table and the last / best validation values per metric."""
    parts = []
    if metrics:
        rows = [(key, value) for key, value in metrics.items() if key != "split"]
        parts.append(f"<p>Test metrics ({html.escape(str(metrics.get('split', 'test')))}):</p>")
        parts.append(table_html(rows, ("metric", "value")))
    else:
        parts.append('<p class="note">No metrics.json in this run.</p>')
    validation = [k for k in (history or {}) if k.startswith("val_") and history[k]]
    if validation:
        rows = []
        for key in sorted(validation):
            values = np.asarray(history[key], dtype=np.float64)
            best = int(np.nanargmax(values)) if np.any(np.isfinite(values)) else 0
            rows.append((key, float(values[-1]), float(values[best]), eval_every * (best + 1)))
        parts.append("<p>Validation (held-out training classes):</p>")
        parts.append(table_html(rows, ("metric", "last", "best", "best at epoch")))
    return "\n".join(parts)


class Sections:
    """Collects `(title, html)` sections; a failing picture becomes a warning and a note."""

    def __init__(self):
        self.items = []
        self.failures = []

    def add(self, title, build):
        try:
            body = build()
        except Exception as error:  # a picture must never lose the page (or the run)
            message = f"{type(error).__name__}: {error}"
            warnings.warn(f"Report section {title!r} could not be drawn: {message}", stacklevel=3)
            self.failures.append(title)
            body = f'<p class="error">Could not draw this section: {html.escape(message)}</p>'
        if body:
            self.items.append((title, body))


def page_html(run_dir, config, sections, output_path):
    """The whole page: title, where it is, the TensorBoard command, then the sections."""
    run_dir = os.path.abspath(run_dir)
    where = os.path.abspath(output_path) if output_path else os.path.join(run_dir, REPORT_NAME)
    logs = os.path.join(run_dir, "logs")
    title = f"keras-dml run: {config.get('method', '?')} on {config.get('dataset', '?')}"
    written = datetime.datetime.now().isoformat(timespec="seconds")
    body = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Run folder: <code>{html.escape(run_dir)}</code>; this page: "
        f"<code>{html.escape(where)}</code> (written {written}, open it in any browser).</p>",
        f"<p>Training curves per step in TensorBoard: <code>tensorboard --logdir "
        f"{html.escape(logs)}</code>, then open the address it prints.</p>",
    ]
    for title_text, content in sections.items:
        body.append(f"<h2>{html.escape(title_text)}</h2>\n{content}")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
