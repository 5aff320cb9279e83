"""Progress of an embedding pipeline: Beam counters, a progress line, and the run's summary."""

import sys
import time

from keras_dml.pipelines.beam_api import DoFn, Metrics, MetricsFilter

NAMESPACE = "keras_dml"
COUNTERS = ("files", "bad_files", "non_image_files", "embedded", "written")
BAD_FILE_NAMES = "bad_file_names"
NON_IMAGE_NAMES = "non_image_file_names"


def counter(name):
    return Metrics.counter(NAMESPACE, name)


class Progress(DoFn):
    """Counts embedded rows and prints a progress line every `seconds` (per worker).

    Args:
        seconds: float. Time between two lines. Defaults to `10`.
    """

    def __init__(self, seconds=10.0):
        self.seconds = float(seconds)

    def setup(self):
        self.embedded = counter("embedded")
        self.count, self.start = 0, time.monotonic()
        self.last = self.start

    def process(self, row):
        self.embedded.inc()
        self.count += 1
        now = time.monotonic()
        if now - self.last >= self.seconds:
            rate = self.count / (now - self.start)
            print(f"keras-dml embed: {self.count} images embedded ({rate:.0f}/s)", file=sys.stderr)
            self.last = now
        yield row


def summary(result):
    """The `COUNTERS`, `bad_file_names` and `non_image_file_names` of a finished run."""
    found = result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))
    values = {name: 0 for name in COUNTERS}
    for entry in found["counters"]:
        values[entry.key.metric.name] += int(entry.committed or 0)
    names = {BAD_FILE_NAMES: set(), NON_IMAGE_NAMES: set()}
    for entry in found.get("string_sets", []):
        names[entry.key.metric.name] |= set(entry.committed or ())
    values.update({key: sorted(found_names) for key, found_names in names.items()})
    return values
