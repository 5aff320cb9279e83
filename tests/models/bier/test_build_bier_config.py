"""`build_bier` takes a resolved run configuration and says so when given a partial one."""

import pytest

from keras_dml.methods.bier.spec import build_bier


def test_a_partial_configuration_is_refused_with_the_resolving_call():
    with pytest.raises(ValueError, match=r"missing keys \['image_size', 'loss'.*resolve_config"):
        build_bier({"method": "bier", "backbone": {"name": "convnet"}, "optimizer": {}})
