"""`ModelCard` (a validated card and where it came from) and `read_card`."""

import json
from dataclasses import dataclass, field
from pathlib import Path

from keras_dml.zoo.errors import CardValidationError
from keras_dml.zoo.schema import validate_card


@dataclass(frozen=True)
class ModelCard:
    """A validated model card and the file it was read from.

    Args:
        data: dict. The validated card content.
        source: `pathlib.Path` or None. The card file, against which `path` fields resolve.
    """

    data: dict
    source: Path | None = field(default=None)

    @property
    def name(self):
        return self.data["name"]

    @property
    def status(self):
        return self.data["status"]

    @property
    def published(self):
        return self.data["status"] == "published"

    @property
    def files(self):
        return list(self.data.get("files", []))

    def file_entry(self, filename):
        """Returns the `files` entry called `filename` (raises `KeyError` if absent)."""
        for entry in self.files:
            if entry["filename"] == filename:
                return entry
        raise KeyError(f"Card '{self.name}' lists no file named '{filename}'.")

    def local_path(self, entry):
        """Returns the absolute path of an entry's `path` field, or None if it has none."""
        if "path" not in entry or self.source is None:
            return None
        return (self.source.parent / entry["path"]).resolve()

    def summary(self):
        """Returns a short dict for listings: name, status, method, backbone, dataset, metrics."""
        metrics = self.data.get("metrics") or {}
        return {
            "name": self.name,
            "status": self.status,
            "method": self.data["method"],
            "backbone": self.data["backbone"],
            "dataset": self.data["training"]["dataset"],
            "embedding_dim": self.data.get("embedding_dim"),
            "metrics": dict(metrics.get("values", {})),
            "size": sum(entry["size"] for entry in self.files),
            "card": str(self.source) if self.source is not None else None,
        }


def read_card(path):
    """Reads and validates one card file into a `ModelCard` (`CardValidationError` if invalid)."""
    path = Path(path).resolve()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CardValidationError(path, "<file>", f"cannot be read: {error}") from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise CardValidationError(
            path, "<json>", f"is not valid JSON: {error.msg} at line {error.lineno}"
        ) from error
    validate_card(data, source=path)
    return ModelCard(data=data, source=path)
