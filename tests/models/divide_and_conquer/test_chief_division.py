"""What the chief of a multi-worker run sends the other workers after a division, and back."""

import numpy as np
import pytest

from keras_dml.methods.divide_and_conquer import chief_division as dc
from keras_dml.methods.division.preconditions import check_division_arguments
from keras_dml.methods.hierarchical_divide_and_conquer import chief_division as hdc


def test_dc_outcome_vector_leads_with_its_status():
    assignment = np.array([2, 0, 1, 1])
    divided = dc.encode_outcome({"assignment": assignment, "entry": {}}, 4)
    assert divided.tolist() == [dc.DIVIDED, 2, 0, 1, 1]
    kept = dc.encode_outcome({"entry": {"failed": "no partition"}}, 4)
    assert kept.tolist() == [dc.KEPT, 0, 0, 0, 0]
    failed = dc.encode_outcome({"error": ValueError("x"), "assignment": assignment}, 4)
    assert failed.tolist() == [dc.FATAL, 0, 0, 0, 0]
    assert len({dc.DIVIDED, dc.KEPT, dc.FATAL}) == 3


def test_dc_division_entry_counts_clusters_and_compares_with_the_previous_one():
    assignment = np.array([0, 0, 1, 1, 1])
    entry = dc.division_entry(4, 2, assignment, None, 3)
    assert entry["cluster_sizes"] == [2, 3, 0] and entry["nmi_previous"] is None
    assert (entry["epoch"], entry["division"], entry["embed_seconds"]) == (4, 2, 0.0)
    same = dc.division_entry(4, 2, assignment, 1 - assignment, 3)
    assert same["nmi_previous"] == pytest.approx(1.0)


@pytest.mark.parametrize("parents", [np.array([0, 0, 1]), None])
def test_hdc_outcome_survives_the_round_trip(parents):
    assignment = np.array([0, 2, 1, 1, 0, 2])
    outcome = {"assignment": assignment, "parents": parents, "reclustered": False}
    received = hdc.encode_outcome(outcome, assignment.size, 4)
    assert received.shape == (2 + 6 + 4,)
    ok, reclustered, decoded, decoded_parents = hdc.decode_outcome(received, assignment.size)
    assert ok and not reclustered
    np.testing.assert_array_equal(decoded, assignment)
    expected = [] if parents is None else parents.tolist()
    assert decoded_parents.dtype == np.int64 and decoded_parents.tolist() == expected


def test_hdc_failed_chief_reads_as_not_ok():
    received = hdc.encode_outcome({"error": RuntimeError("k-means")}, 5, 3)
    assert not hdc.decode_outcome(received, 5)[0]


def test_hdc_division_logs_add_the_nmi_only_when_there_was_a_previous_division():
    entry = {
        "split": True,
        "reclustered": False,
        "cluster_sizes": [3, 5, 4],
        "embed_seconds": 1.5,
        "cluster_seconds": 0.25,
        "nmi_previous": None,
    }
    logs = hdc.division_logs(entry)
    assert logs == {
        "hdc_split": 1.0,
        "hdc_reclustered": 0.0,
        "hdc_min_cluster_size": 3.0,
        "hdc_max_cluster_size": 5.0,
        "hdc_recluster_seconds": 1.75,
    }
    for nmi in (0.5, 0.0):  # 0.0 (independent clusterings) is a value, not a missing one
        assert hdc.division_logs({**entry, "nmi_previous": nmi})["hdc_nmi_previous"] == nmi


def test_shared_division_arguments_name_the_callbacks_own_period():
    class Sampler:
        def set_clusters(self, assignment):
            pass

    check_division_arguments("recluster_every", 1, "features", Sampler())
    with pytest.raises(ValueError, match="`division_every` must be a positive int"):
        check_division_arguments("division_every", True, "embedding", Sampler())
    with pytest.raises(ValueError, match="cluster_on"):
        check_division_arguments("division_every", 2, "pixels", Sampler())
    with pytest.raises(ValueError, match="set_clusters"):
        check_division_arguments("division_every", 2, "embedding", object())
