"""CI installs every Debian font package the rendered-character datasets draw with, so their
tests run there rather than skip (a package missing from `.ci/run` would skip them silently)."""

import os
import re

import pytest

from keras_dml.data.datasets import hangul, kanji

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("dataset", [hangul, kanji], ids=["hangul", "kanji"])
def test_ci_installs_the_dataset_fonts(dataset):
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        words = set(re.findall(r"[\w.+-]+", f.read()))
    missing = [package for package in dataset.APT_PACKAGES if package not in words]
    assert missing == [], f".ci/run does not install {missing}"
