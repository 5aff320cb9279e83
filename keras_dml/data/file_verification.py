"""Checks that image files decode: `ImageDataset.verify` drops the ones that do not."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from keras_dml.data.file_report import first_few, report_unreadable

# Formats `tf.io.decode_image` decodes; anything else PIL opens would fail inside the pipeline.
TF_DECODABLE_FORMATS = ("JPEG", "MPO", "PNG", "GIF", "BMP", "WEBP")


def _check_image_file(path):
    """Returns `None` if `path` is an image the pipeline can decode, else the reason."""
    if not os.path.isfile(path):
        return "missing file"
    from PIL import Image

    try:
        with Image.open(path) as image:
            if image.format not in TF_DECODABLE_FORMATS:
                return f"format {image.format} is not decodable by tf.io.decode_image"
            if image.format in ("JPEG", "MPO"):
                # DCT-domain downscaling: the whole stream is still parsed, 8x less work.
                image.draft("RGB", (max(1, image.width // 8), max(1, image.height // 8)))
            image.load()
    except Exception as error:  # PIL raises many types for corrupt data.
        return f"{type(error).__name__}: {error}"
    return None


class FileVerification:
    """`ImageDataset.verify` (a mixin checking and filtering the host dataset's own files)."""

    def verify(self, num_workers=None, strict_files=None):
        """Checks every image file once and drops those the pipeline could not decode.

        Bad files leave `paths` and `labels`, go to `skipped_files` and are named in one warning.

        Args:
            num_workers: int. Threads. Defaults to `None` (`min(8, os.cpu_count())`).
            strict_files: bool. Raise instead of skipping. Defaults to `None` (the dataset's).

        Returns:
            list of str: the skipped files.

        Raises:
            UnreadableFilesError: a file cannot be read and `strict_files` is true.
        """
        if self._verified:
            return list(self.skipped_files)
        strict_files = self.strict_files if strict_files is None else strict_files
        workers = num_workers or min(8, os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            reasons = list(pool.map(_check_image_file, self.paths, chunksize=64))
        bad = np.array([r is not None for r in reasons], dtype=bool)
        if bad.any():
            skipped = [(p, r) for p, r in zip(self.paths, reasons) if r is not None]
            lost = sorted(set(self.labels[bad].tolist()) - set(self.labels[~bad].tolist()))
            note = f" Classes left without images: {first_few(self.class_names[c] for c in lost)}."
            where = f"{self.name}/{self.split}"
            report_unreadable(where, skipped, len(self.paths), strict_files, note if lost else "")
            self.skipped_files = [p for p, _ in skipped]
            self.paths = self.paths[~bad]
            self.labels = self.labels[~bad]
        self._verified = True
        return list(self.skipped_files)
