"""Hierarchical D&C splits the largest clusters first when K_max leaves room for fewer splits.

Sanakoyeu et al., TPAMI 2021, Sec. 3.1.1 (bisecting division); `split_clusters`' docstring.
"""

import numpy as np

from keras_dml.methods.hierarchical_divide_and_conquer.division import split_clusters

KMEANS = {"niter": 20, "nredo": 1}


def test_budget_of_one_split_goes_to_the_largest_cluster_whatever_its_id():
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((5, 4)) * 20.0
    labels = np.repeat(np.arange(10), 3)  # two classes per blob, three samples per class
    blob = labels // 2
    vectors = (centers[blob] + rng.standard_normal((labels.size, 4))).astype("float32")
    # Both clusters can be split; cluster 1 (blobs 2-4, 18 points) is larger than 0 (12 points).
    assignment = (blob >= 2).astype(np.int64)
    new, parents, unsplit = split_clusters(vectors, labels, assignment, 3, **KMEANS)
    assert parents.tolist() == [0, 1, 1] and unsplit == []
    np.testing.assert_array_equal(new[assignment == 0], 0)
    # Swapping the ids moves the split with the cluster, not with the id.
    new, parents, _ = split_clusters(vectors, labels, 1 - assignment, 3, **KMEANS)
    assert parents.tolist() == [0, 0, 1]
    np.testing.assert_array_equal(new[assignment == 0], 2)
