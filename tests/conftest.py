"""Test-wide hooks: the `tf_only` marker (see `tests/backend_utils.py`)."""

import keras
import pytest


def pytest_collection_modifyitems(config, items):
    """Skips `@pytest.mark.tf_only("reason")` tests on a backend other than TensorFlow."""
    backend = keras.backend.backend()
    for item in items:
        marker = item.get_closest_marker("tf_only")
        if marker is None:
            continue
        if not marker.args or not isinstance(marker.args[0], str) or not marker.args[0]:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.tf_only needs the reason the test is TensorFlow "
                'only, e.g. @pytest.mark.tf_only("exports a SavedModel")'
            )
        if backend != "tensorflow":
            item.add_marker(pytest.mark.skip(reason=f"TensorFlow only: {marker.args[0]}"))
