"""`--share K/N`: CI's rotating part of the mutation catalogue still covers every entry."""

import argparse

import pytest

from tests.mutations.catalogue import load_catalogue
from tests.mutations.run import ALWAYS_RUN, in_share, parse_share

RECORDS = load_catalogue()
COUNT = 3


def test_every_entry_runs_in_some_share_and_each_share_is_a_part():
    shares = [[r["id"] for r in RECORDS if in_share(r, (k, COUNT))] for k in range(COUNT)]
    assert set().union(*shares) == {r["id"] for r in RECORDS}
    assert all(len(share) < len(RECORDS) for share in shares)


def test_the_methods_defining_lines_run_in_every_share():
    defining = [r for r in RECORDS if r["file"].startswith(ALWAYS_RUN)]
    assert len(defining) >= 40
    assert all(in_share(r, (k, COUNT)) for r in defining for k in range(COUNT))


@pytest.mark.parametrize("text", ["3/3", "1", "a/3", "-1/3"])
def test_a_bad_share_is_refused_in_one_line(text):
    with pytest.raises(argparse.ArgumentTypeError, match="K/N"):
        parse_share(text)
