"""Checks that image files decode: `ImageDataset.verify` drops the ones that do not."""

import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

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

    def verify(self, num_workers=None):
        """Checks every image file once and drops those the pipeline could not decode.

        Bad files leave `paths` and `labels`, go to `skipped_files` and are reported in one warning.

        Args:
            num_workers: int. Threads. Defaults to `None` (`min(8, os.cpu_count())`).

        Returns:
            list of str: the skipped files.
        """
        if self._verified:
            return list(self.skipped_files)
        workers = num_workers or min(8, os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            reasons = list(pool.map(_check_image_file, self.paths, chunksize=64))
        bad = np.array([r is not None for r in reasons], dtype=bool)
        if bad.any():
            skipped = [(p, r) for p, r in zip(self.paths, reasons) if r is not None]
            self.skipped_files = [p for p, _ in skipped]
            lost = sorted(set(self.labels[bad].tolist()) - set(self.labels[~bad].tolist()))
            first = "; ".join(f"{p} ({r})" for p, r in skipped[:5])
            empty = (
                f" Classes left without images: {[self.class_names[c] for c in lost]}."
                if lost
                else ""
            )
            warnings.warn(
                f"{self.name}/{self.split}: skipping {len(skipped)} of {len(self.paths)} image "
                f"files that are missing or cannot be decoded (listed in `skipped_files`). "
                f"First: {first}.{empty}",
                stacklevel=2,
            )
            self.paths = self.paths[~bad]
            self.labels = self.labels[~bad]
        self._verified = True
        return list(self.skipped_files)
