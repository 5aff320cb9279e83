"""Cross-batch memory under a 2-replica `MirroredStrategy` equals one device, for every method.

The script of `tests/test_methods_distributed.py` with the contrastive loss wrapped in a
cross-batch memory small enough to wrap around in the two steps: the logged losses, the
evaluation and every weight (the memories included) equal one device's, and both replicas hold
the same memory, because each enqueues the global batch gathered in replica order.
"""

import pytest

from tests.test_methods_distributed import SCRIPT, run_on_two_cpus

CONTRASTIVE = '"loss": {"name": "contrastive"}'
XBM = '"loss": {"name": "cross_batch_memory", "loss": {"name": "contrastive"}, "memory_size": 12}'
REPLICA_CHECK = """
    memories = [v for v in mirrored.weights if "cross_batch_memory" in v.path]
    assert memories, name
    for v in memories:
        replicas = [keras.ops.convert_to_numpy(r) for r in v.value.values]
        assert len(replicas) == 2, v.path
        np.testing.assert_array_equal(replicas[0], replicas[1], err_msg=f"{name}: {v.path}")
    filled = [v for v in memories if v.path.endswith("filled")]
    assert max(int(keras.ops.convert_to_numpy(v).max()) for v in filled) == 12, name
    print("OK", name, flush=True)"""


def xbm_script():
    assert SCRIPT.count(CONTRASTIVE) == 1
    marker = '\n    print("OK", name, flush=True)'
    assert SCRIPT.count(marker) == 1
    return SCRIPT.replace(CONTRASTIVE, XBM).replace(marker, REPLICA_CHECK)


@pytest.mark.tf_only("tf.distribute.MirroredStrategy is TensorFlow's")
@pytest.mark.slow
def test_every_method_with_cross_batch_memory_under_mirrored_strategy_matches_one_device():
    result = run_on_two_cpus(xbm_script())
    names = result.stdout.strip().splitlines()[-1].split(" ", 1)[1].split(",")
    assert {"abe", "baseline", "bier", "dc", "dcml", "hdc", "mheads"} <= set(names)
