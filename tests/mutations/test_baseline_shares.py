"""The mutation runner's baseline runs the listed tests in parallel shares, each file whole."""

from tests.mutations.run import baseline_shares


def test_every_node_runs_once_and_each_file_stays_in_one_share():
    nodes = [f"tests/a.py::t{i}" for i in range(5)] + ["tests/b.py::t", "tests/c.py::t1"]
    nodes += ["tests/c.py::t2"]
    shares = baseline_shares(nodes, 2)
    assert sorted(node for share in shares for node in share) == sorted(nodes)
    owners = {node.split("::")[0]: index for index, share in enumerate(shares) for node in share}
    for index, share in enumerate(shares):
        assert all(owners[node.split("::")[0]] == index for node in share)
    assert sorted(len(share) for share in shares) == [3, 5]


def test_one_worker_or_one_file_gives_one_share():
    nodes = ["tests/a.py::t1", "tests/a.py::t2"]
    assert baseline_shares(nodes, 4) == [nodes]
    assert baseline_shares([*nodes, "tests/b.py::t"], 1) == [[*nodes, "tests/b.py::t"]]
