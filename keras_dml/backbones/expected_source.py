"""Which published file a recipe's converted ImageNet weights must come from, and the check."""

import dataclasses
import hashlib
import os
import string

from keras_dml.backbones.weights import WeightsUnavailableError
from keras_dml.backbones.weights_metadata import read_weights_metadata
from keras_dml.utils.sha256 import sha256_file

WEIGHTS_KEYS = ("pretrained", "source_file", "source_sha256", "source_sha1")
ALGORITHMS = {"sha256": 64, "sha1": 40}
# Fewest hex digits a digest prefix may have (torchvision's file names carry 8).
MIN_PREFIX = 8


def _one_line_entry(entry):
    return " ".join(repr(entry).split())


def _checked_digest(entry, algorithm):
    """The lowercased `source_<algorithm>` of `entry`, or `None` when absent."""
    key = f"source_{algorithm}"
    value = entry.get(key)
    if value is None:
        return None
    length = ALGORITHMS[algorithm]
    if (
        not isinstance(value, str)
        or not MIN_PREFIX <= len(value) <= length
        or set(value.lower()) - set(string.hexdigits.lower())
    ):
        raise ValueError(
            f"`weights.{key}` must be a string of {MIN_PREFIX} to {length} hex digits (the "
            f"file's {algorithm} or its published prefix; quote it in JSON). "
            f"Received: {key}={value!r}"
        )
    return value.lower()


@dataclasses.dataclass(frozen=True)
class ExpectedSource:
    """The published file converted ImageNet weights must come from.

    Args:
        file: str. Its published name, e.g. `"resnet50-0676ba61.pth"`.
        sha256: str or None. Its sha256, or a prefix of at least 8 hex digits.
        sha1: str or None. Its sha1, or a prefix of at least 8 hex digits.
    """

    file: str
    sha256: str | None = None
    sha1: str | None = None

    @classmethod
    def from_entry(cls, entry):
        """Parses a recipe's `weights` object (`ValueError`: one line naming a bad or missing key).

        Examples:
        >>> ExpectedSource.from_entry({"pretrained": "imagenet",
        ...     "source_file": "resnet50-0676ba61.pth", "source_sha256": "0676BA61"}).sha256
        '0676ba61'
        """
        unknown = sorted(set(entry) - set(WEIGHTS_KEYS))
        if unknown or entry.get("pretrained") != "imagenet":
            raise ValueError(
                "A `weights` object names converted ImageNet weights: keys "
                f"{list(WEIGHTS_KEYS)}, with pretrained='imagenet' and at least one digest. "
                f"Received: weights={_one_line_entry(entry)}"
            )
        file = entry.get("source_file")
        if not isinstance(file, str) or not file:
            raise ValueError(
                "`weights.source_file` must name the published file the weights are converted "
                f"from, e.g. 'resnet50-0676ba61.pth'. Received: weights={_one_line_entry(entry)}"
            )
        expected = cls(file, _checked_digest(entry, "sha256"), _checked_digest(entry, "sha1"))
        if not expected.digests():
            raise ValueError(
                f"`weights` names {file!r} without a digest: add `source_sha256` or "
                "`source_sha1` (the published one, or a prefix of at least 8 hex digits)."
            )
        return expected

    def digests(self):
        """`{algorithm: expected hex digest or prefix}` of the digests given."""
        return {name: getattr(self, name) for name in ALGORITHMS if getattr(self, name)}

    def describe_digests(self):
        """`sha256 0676ba61...`: the expected digests, `...` marking a prefix."""
        return ", ".join(
            f"{name} {digest}{'' if len(digest) == ALGORITHMS[name] else '...'}"
            for name, digest in self.digests().items()
        )

    def describe(self):
        """`resnet50-0676ba61.pth (sha256 0676ba61...)`: the file and its digests."""
        return f"{self.file} ({self.describe_digests()})"


def source_file_record(path):
    """The name, sha256 and sha1 of the `.pth` / `.caffemodel` file at `path`, as a dict."""
    sha1 = hashlib.sha1(usedforsecurity=False)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha1.update(chunk)
    return {"name": os.path.basename(path), "sha256": sha256_file(path), "sha1": sha1.hexdigest()}


def check_converted_source(path, expected, convert_command):
    """Returns `path`, converted weights, if they record a source file with the expected digest.

    Raises:
        WeightsUnavailableError: one line with `convert_command`, the `keras-dml backbones
            convert` line that makes the right file.
    """
    record = read_weights_metadata(path) or {}
    source = record.get("source_file")
    if not source:
        raise WeightsUnavailableError(
            f"{path} does not record which file it was converted from, and the recipe expects "
            f"{expected.describe()}: convert that file again with `{convert_command}`."
        )
    for algorithm, digest in expected.digests().items():
        actual = str(source.get(algorithm, ""))
        if not actual.startswith(digest):
            raise WeightsUnavailableError(
                f"{path} was converted from {source.get('name')!r} ({algorithm} {actual}), but "
                f"the recipe expects {expected.describe()}: convert that file with "
                f"`{convert_command}`."
            )
    return path
