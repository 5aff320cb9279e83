"""`DecodeFiles`: image files to pixels; a bad file is counted, named and skipped, never fatal."""

import logging

from keras_dml.pipelines.beam_api import DoFn, FileSystems, Metrics
from keras_dml.pipelines.image_files import BAD_FILE_ERRORS, decode_file
from keras_dml.pipelines.progress import BAD_FILE_NAMES, NAMESPACE, counter


class DecodeFiles(DoFn):
    """`(id, path, label)` records -> `((id, path, label), pixels)` at the model's input shape.

    Args:
        image_shape: `(H, W, C)` the model takes.
    """

    def __init__(self, image_shape):
        self.image_shape = tuple(image_shape)

    def setup(self):
        self.files, self.bad = counter("files"), counter("bad_files")
        self.bad_names = Metrics.string_set(NAMESPACE, BAD_FILE_NAMES)

    def process(self, record):
        path = record[1]
        self.files.inc()
        try:
            with FileSystems.open(path) as file:
                pixels = decode_file(file.read(), self.image_shape)
        except BAD_FILE_ERRORS as error:
            self.bad.inc()
            self.bad_names.add(f"{path} ({' '.join(str(error).split())})")
            logging.getLogger(__name__).info("skipped %s: %s", path, error)
            return
        yield record, pixels
