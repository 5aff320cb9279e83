"""keras-dml's pair losses and FastAP have pytorch-metric-learning's gradients, not only its values.

Equal values do not rule out a different gradient: a constant weight left differentiable, a
reduction over another set of anchors, or a distance whose derivative differs where it is not
smooth. The gradients with respect to the raw (unnormalised) embeddings are what training sees,
so each stored pair and FastAP case of `tests/reference/pml_loss_values.json` is differentiated
live on both sides: PML in float64 with autograd, keras-dml in float32 on the current backend.
Skipped where torch or PML is not installed (the `pml` extra; CI installs it).
"""

import json
import os

import numpy as np
import pytest

from keras_dml import losses
from tests.support.backend_utils import gradients
from tests.support.paths import REFERENCE_DIR

torch = pytest.importorskip("torch")
pytest.importorskip("pytorch_metric_learning")

from tests.reference.make_pml_values import pml_pair_loss  # noqa: E402 (needs torch and PML)

with open(os.path.join(REFERENCE_DIR, "pml_loss_values.json")) as f:
    DATA = json.load(f)
BATCHES = {**DATA["batches"], **DATA["pair_batches"]}
CASES = DATA["pair_cases"] + DATA["fast_ap_cases"]


def _case_id(case):
    arguments = "-".join(f"{k}={v}" for k, v in case["arguments"].items())
    return f"{case['loss']}-{case['batch']}-{arguments}"


def pml_gradient(case, labels, embeddings):
    """d(PML loss) / d(embeddings), float64."""
    source = torch.tensor(embeddings, dtype=torch.float64, requires_grad=True)
    loss_fn = pml_pair_loss(case["pml_class"], case["pml_arguments"])
    loss_fn(source, torch.tensor(labels, dtype=torch.long)).backward()
    return source.grad.numpy()


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_gradient_equals_pytorch_metric_learning(case):
    batch = BATCHES[case["batch"]]
    labels = np.asarray(batch["labels"], "int32")
    embeddings = np.asarray(batch["embeddings"], "float32")
    function = getattr(losses, f"{case['loss']}_loss")
    (ours,) = gradients(lambda e: function(labels, e, **case["arguments"]), [embeddings])
    theirs = pml_gradient(case, labels, embeddings.astype("float64"))
    assert np.abs(theirs).max() > 0.0, "a case with no gradient checks nothing"
    # float32 against float64: errors relative to the largest entry of the gradient.
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


def test_cases_cover_circle_and_fast_ap():
    assert {"circle", "fast_ap"} <= {case["loss"] for case in CASES}
