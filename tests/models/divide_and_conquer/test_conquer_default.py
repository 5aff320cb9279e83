"""D&C merges by default (CVPR 2019, Sec. 3.3): `conquer_epoch="auto"` conquers in the last 5%
of the epochs on batches over all the data, as the reference code's last 10 of 200 epochs.

Without the merge, a short D&C run kept four under-trained learners (hangul, 3 epochs: R@1
0.915 / MAP@R 0.458; with the merge in the last epoch 0.965 / 0.631, README accuracy table).
"""

import numpy as np
import pytest

from keras_dml.methods import get_method
from keras_dml.methods.divide_and_conquer.spec import conquer_epoch_for
from keras_dml.training import train
from tests.training.test_entry_points import array_splits


@pytest.mark.parametrize(
    "epochs, first", [(200, 190), (40, 38), (20, 19), (10, 9), (3, 2), (2, 1), (1, None)]
)
def test_auto_conquers_in_the_last_five_percent_of_the_epochs(epochs, first):
    assert conquer_epoch_for("auto", epochs) == first


def test_explicit_values_are_kept():
    assert conquer_epoch_for(3, 200) == 3
    assert conquer_epoch_for(None, 200) is None


def test_defaults_are_auto_on_all_the_data():
    options = get_method("dc").parse_options({})
    assert options.conquer_epoch == "auto" and options.conquer_sampling == "all"


@pytest.mark.parametrize("value", [-1, "last", True, 1.5])
def test_a_bad_conquer_epoch_is_one_line_naming_the_values(value):
    with pytest.raises(ValueError, match=r"epoch >= 0, 'auto'.*or null") as error:
        get_method("dc").parse_options({"method_options": {"conquer_epoch": value}})
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("conquer_epoch, stages", [("auto", [0.0, 1.0]), (None, [0.0, 0.0])])
def test_a_run_with_defaults_merges_in_its_last_epoch(conquer_epoch, stages, tmp_path):
    config = {
        "method": "dc",
        "dataset": "arrays",
        "epochs": 2,
        "image_size": 32,
        "backbone": "convnet",
        "model": {"embedding_dim": 8, "num_learners": 2},
        # Features of the backbone divide the untrained model reliably on every backend (the
        # colour-coded classes are far apart there); the subject here is the stage.
        "method_options": {"conquer_epoch": conquer_epoch, "cluster_on": "features"},
    }
    result = train(config, str(tmp_path), verbose=0, splits=array_splits(), report=False)
    assert result["history"]["dc_conquer"] == stages
    assert result["model"].stage == ("conquer" if stages[-1] else "divide")
    assert np.isfinite(result["history"]["loss"]).all()
