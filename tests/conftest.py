"""Test-wide hooks and fixtures: the `tf_only` marker (tests/support/backend_utils.py),
`googlenet`."""

import keras
import pytest

from tests.support.ci_rotation import rotate_slow_items


def pytest_collection_modifyitems(config, items):
    """Skips `@pytest.mark.tf_only("reason")` tests on a backend other than TensorFlow, and under
    the CI budget the slow tests of another run's share (`rotate_slow_items`)."""
    rotate_slow_items(items)
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


@pytest.fixture(scope="module")
def googlenet():
    """A 64 px GoogLeNet backbone with seeded weights, shared by a module's tests."""
    from keras_dml import backbones

    keras.utils.set_random_seed(0)
    return backbones.get("googlenet", input_shape=(64, 64, 3))
