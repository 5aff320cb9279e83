"""keras-dml's pair losses equal pytorch-metric-learning's on stored batches.

`tests/reference/pml_loss_values.json` holds, under `pair_cases`, the values PML 2.9 computed in
float64 on the labels and embeddings of its `batches` and `pair_batches` (written by
`tests/reference/make_pml_values.py`, whose docstring says how each PML definition is aligned
with keras-dml's). No torch is needed here.
"""

import json
import os

import numpy as np
import pytest

from keras_dml import losses
from tests.support.paths import REFERENCE_DIR

REFERENCE = os.path.join(REFERENCE_DIR, "pml_loss_values.json")
with open(REFERENCE) as f:
    DATA = json.load(f)
BATCHES = {**DATA["batches"], **DATA["pair_batches"]}
PAIR_LOSSES = (
    "ntxent",
    "supcon",
    "circle",
    "lifted_structure",
    "npairs",
    "tuplet_margin",
    "snr_contrastive",
)


def _case_id(case):
    arguments = "-".join(f"{k}={v}" for k, v in case["arguments"].items())
    return f"{case['loss']}-{case['batch']}-{arguments}"


@pytest.mark.parametrize("case", DATA["pair_cases"], ids=_case_id)
def test_equals_pytorch_metric_learning(case):
    batch = BATCHES[case["batch"]]
    labels = np.asarray(batch["labels"], "int32")
    embeddings = np.asarray(batch["embeddings"], "float32")
    function = getattr(losses, f"{case['loss']}_loss")
    ours = float(function(labels, embeddings, **case["arguments"]))
    # float32 here, float64 in PML. Measured: the largest relative difference is 7.1e-7
    # (tuplet margin), the largest absolute one 2.3e-5 (Circle, a loss of several hundred).
    np.testing.assert_allclose(ours, case["pml_value"], rtol=1e-5, atol=1e-6)


def test_reference_covers_every_pair_loss_and_regular_batches():
    assert {case["loss"] for case in DATA["pair_cases"]} == set(PAIR_LOSSES)
    for name, batch in BATCHES.items():
        labels = batch["labels"]
        counts = np.bincount(labels)
        assert (counts >= 2).sum() >= 2, name  # positives of two classes, so negatives too
