"""keras-dml's class-based losses equal pytorch-metric-learning's on stored batches.

`tests/reference/pml_loss_values.json` holds fixed batches and the values PML 2.9 computed on them
in float64 (written by `tests/reference/make_pml_values.py`, whose docstring lists where PML's
definitions differ and how the stored arguments align them). No torch is needed here.
"""

import json
import math
import os

import numpy as np
import pytest

from keras_dml import losses
from tests.support.paths import REFERENCE_DIR

REFERENCE = os.path.join(REFERENCE_DIR, "pml_loss_values.json")
with open(REFERENCE) as f:
    DATA = json.load(f)
FUNCTIONS = {
    "normalized_softmax": losses.normalized_softmax_loss,
    "proxy_anchor": losses.proxy_anchor_loss,
    "arcface": losses.arcface_loss,
    "cosface": losses.cosface_loss,
    "proxy_nca": losses.proxy_nca_loss,
}


def _batch(name):
    batch = DATA["batches"][name]
    return (
        np.asarray(batch["labels"], "int32"),
        np.asarray(batch["embeddings"], "float32"),
        np.asarray(batch["class_weights"], "float32"),
    )


def _case_id(case):
    arguments = "-".join(f"{k}={v}" for k, v in case["arguments"].items())
    return f"{case['loss']}-{case['batch']}-{arguments}"


@pytest.mark.parametrize("case", DATA["cases"], ids=_case_id)
def test_equals_pytorch_metric_learning(case):
    labels, embeddings, weights = _batch(case["batch"])
    ours = float(FUNCTIONS[case["loss"]](labels, embeddings, weights, **case["arguments"]))
    # float32 here, float64 in PML. Measured: the largest relative difference is 2.1e-5 (2.8e-7
    # on a normalised softmax loss of 0.013), every other case is within relative 5e-7; the
    # largest absolute difference is 7.8e-6 (ArcFace, a loss of 86).
    np.testing.assert_allclose(ours, case["pml_value"], rtol=1e-5, atol=1e-6)


def test_reference_covers_every_loss_and_the_arcface_fallback():
    assert {case["loss"] for case in DATA["cases"]} == set(FUNCTIONS)
    labels, embeddings, weights = _batch("far_from_target_b10_c6_d8")
    x = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    w = weights / np.linalg.norm(weights, axis=1, keepdims=True)
    target_cosines = np.sum(x * w[labels], axis=1)
    # theta > pi - m for m = 0.5 and 0.3: the threshold branch of both ArcFace cases.
    assert np.sum(target_cosines < math.cos(math.pi - 0.3)) >= 3
    assert all(
        len(set(_batch(name)[0].tolist())) < len(_batch(name)[2]) for name in DATA["batches"]
    )
