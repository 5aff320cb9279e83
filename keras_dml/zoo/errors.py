"""Exceptions raised by the model zoo, all `ZooError`s."""


class ZooError(Exception):
    """Base class of every model-zoo error."""


class CardValidationError(ZooError, ValueError):
    """A model card is malformed: the message names the card file and the bad field.

    Args:
        source: str. The card file (or where the card came from).
        field: str. Dotted path of the offending field, e.g. `"files[0].sha256"`.
        problem: str. What is wrong and what is expected.
    """

    def __init__(self, source, field, problem):
        self.source = str(source)
        self.field = field
        self.problem = problem
        super().__init__(f"Invalid model card {self.source}: field '{field}' {problem}")


class UnknownModelError(ZooError, KeyError):
    """No model card has the requested name; the message suggests close matches."""

    def __str__(self):
        # KeyError quotes its argument; show the message as written.
        return str(self.args[0]) if self.args else ""


class ModelNotPublishedError(ZooError):
    """The card describes a model whose weights are not published (recipe only)."""


class IntegrityError(ZooError):
    """A file's size or sha256 differs from the card; the file was not used.

    Args:
        filename: str. The file that failed verification.
        expected_sha256: str. Hash written in the card.
        actual_sha256: str or None. Hash of the bytes received (None when the size failed).
        expected_size: int. Size written in the card.
        actual_size: int. Size of the bytes received.
        origin: str. Where the bytes came from (URL or local path).
        deleted: bool. Whether the bad file was deleted. Defaults to `True`.
        fix: str or None. What to do about it. Defaults to retrying or a trusted mirror.
    """

    def __init__(
        self,
        filename,
        expected_sha256,
        actual_sha256,
        expected_size,
        actual_size,
        origin,
        deleted=True,
        fix=None,
    ):
        self.filename = filename
        self.expected_sha256 = expected_sha256
        self.actual_sha256 = actual_sha256
        self.expected_size = expected_size
        self.actual_size = actual_size
        self.origin = origin
        actual_hash = actual_sha256 if actual_sha256 is not None else "(not computed)"
        super().__init__(
            f"Integrity check failed for '{filename}' from {origin}: "
            f"expected sha256 {expected_sha256} and size {expected_size} bytes, "
            f"got sha256 {actual_hash} and size {actual_size} bytes. "
            f"{'The file was deleted and n' if deleted else 'N'}othing was loaded. "
            + (
                fix
                or "If the card is right, the source is corrupted or tampered with; retry later "
                "or set KERAS_DML_MIRROR to a trusted mirror."
            )
        )


class DownloadError(ZooError):
    """A file could not be fetched from any source after all retries."""


class UnsafeFormatError(ZooError, ValueError):
    """The file format could execute code when loaded (SavedModel, pickle, legacy HDF5, ...)."""
