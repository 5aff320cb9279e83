"""Divide & Conquer (Sanakoyeu et al., CVPR 2019) in plain PyTorch: the `pml/dc-*` rows.

The accuracy benchmark's `dc/best` row (keras-dml's D&C with normalized softmax) trails its
baseline in the pretrained regime. This module trains the same method, at the same settings,
without keras-dml's D&C, so that the `pml/dc-normalized_softmax` row, paired with
`pml/normalized_softmax`, tells whether the gap is the method's or keras-dml's:

- K learners are K contiguous chunks of one `Linear(channels, d)` embedding (Sec. 3.2,
  "Splitting the embedding"); each chunk is L2-normalised on its own for clustering and
  evaluation, and the evaluation vector is their concatenation (Sec. 4.2);
- before each divided epoch (every `T` epochs, Algorithm 1) all training images are embedded
  with the full concatenated embedding and k-means splits the samples into K clusters
  (Sec. 3.2, "Splitting the data"); the new clusters keep their learners by a linear assignment
  on the IoU of old and new memberships (Appendix A);
- inside a cluster, a class with a single sample is dropped; each cluster has its own
  class-balanced sampler and the batches go round-robin over the clusters; the batch of cluster
  k trains learner k's chunk only, with learner k's own loss (Sec. 3.3, Eq. 3);
- the conquer stage (Sec. 3.3, "Merging the solutions"; the end of Algorithm 1): the last epoch
  fine-tunes the full embedding on all the data with one new loss over all d dimensions and the
  plain class-balanced sampler.

Independent of keras-dml's D&C: written from the paper (and the reference code's facts in
`METHOD_NOTES.md`: chunk-wise normalisation, single-sample classes dropped, one sampler per
cluster, round-robin batches, linear-sum-assignment matching, applied the right way round), with
the clustering from scikit-learn (`KMeans`), the matching from SciPy (`linear_sum_assignment`),
and the loss from pytorch-metric-learning (`NormalizedSoftmaxLoss`, one per learner with its
own proxies). Shared with keras-dml: the backbone architecture and, in the pretrained regime,
its pretrained weights (`torch_reference.translate_backbone`, `copy_backbone_weights`), the
class-balanced batches (`keras_dml.data.MPerClassSampler`), and the evaluation
(`keras_dml.evaluation.evaluate`, in `run.py`).

One difference from the paper's words, as in the reference code: the embedding is one `Linear`
trained with Adam, so a step of learner k gives the other chunks a zero gradient, but Adam's
moment estimates from their earlier steps still move them a little.

References:
    Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019.
"""

import time

import numpy as np
import torch
from pytorch_metric_learning import losses as pml_losses

from benchmarks.accuracy.torch_reference import EmbeddingNet, _as_nchw, translate_with_weights

# k-means restarts and iterations (the reference code runs faiss with several restarts and 100
# iterations).
KMEANS_RESTARTS = 5
KMEANS_ITERATIONS = 100
EMBED_BATCH = 512


def learner_slice(learner, dim, num_learners):
    """The embedding dimensions of `learner`: the `learner`-th of `num_learners` contiguous
    chunks of `dim` (Sec. 3.2: f_1 maps into the first d/K dimensions, f_2 the next, ...)."""
    size = dim // num_learners
    return slice(learner * size, (learner + 1) * size)


def normalize_chunks(embeddings, num_learners):
    """Each learner's chunk of `embeddings` `[N, d]` L2-normalised on its own, concatenated."""
    chunks = embeddings.reshape(len(embeddings), num_learners, -1)
    return torch.nn.functional.normalize(chunks, dim=-1).reshape(len(embeddings), -1)


def embed(net, images, num_learners):
    """`[N, d]` float32 NumPy embeddings of `images` (NCHW tensor) with `net` in eval mode: the
    concatenation of the separately normalised chunks (clustering and test, Sec. 4.2)."""
    was_training = net.training
    net.eval()
    outputs = []
    with torch.no_grad():
        for begin in range(0, len(images), EMBED_BATCH):
            out = normalize_chunks(net(images[begin : begin + EMBED_BATCH]), num_learners)
            outputs.append(out.cpu().numpy())
    net.train(was_training)
    return np.concatenate(outputs).astype(np.float32)


def cluster_samples(embeddings, num_clusters, seed):
    """k-means cluster of each sample (Sec. 3.2, "Splitting the data"), `[N]` ints."""
    from sklearn.cluster import KMeans

    kmeans = KMeans(
        n_clusters=num_clusters,
        n_init=KMEANS_RESTARTS,
        max_iter=KMEANS_ITERATIONS,
        random_state=seed,
    )
    return kmeans.fit_predict(embeddings).astype(np.int64)


def match_clusters(previous, current, num_clusters):
    """Relabels `current` clusters so that each keeps the learner of its most similar previous
    cluster (Appendix A: a linear assignment on the IoU of the clusters' members).

    Args:
        previous: int array `[N]`. Each sample's learner after the last clustering.
        current: int array `[N]`. Each sample's cluster from the new k-means.
        num_clusters: int. K.

    Returns:
        int array `[N]`: each sample's learner for the new clusters.

    Examples:
    >>> match_clusters(np.array([0, 0, 1, 1, 2, 2]), np.array([1, 1, 2, 2, 0, 0]), 3).tolist()
    [0, 0, 1, 1, 2, 2]
    """
    from scipy.optimize import linear_sum_assignment

    ids = np.arange(num_clusters)
    before = (np.asarray(previous)[:, None] == ids).astype(np.int64)
    after = (np.asarray(current)[:, None] == ids).astype(np.int64)
    overlap = before.T @ after  # [learner, new cluster]
    union = before.sum(0)[:, None] + after.sum(0)[None, :] - overlap
    iou = overlap / np.maximum(union, 1)
    learners, clusters = linear_sum_assignment(iou, maximize=True)
    learner_of_cluster = np.empty(num_clusters, np.int64)
    learner_of_cluster[clusters] = learners
    return learner_of_cluster[np.asarray(current)]


def drop_single_sample_classes(members, labels):
    """The `members` (sample indices) whose class has 2 or more samples among them."""
    classes, counts = np.unique(labels[members], return_counts=True)
    return members[np.isin(labels[members], classes[counts >= 2])]


def divided_epoch_batches(assignment, labels, num_learners, budget, num_batches, seed, epoch):
    """One divided epoch: `num_batches` `(learner, sample indices)`, round-robin over learners.

    Learner k's batches are drawn from its cluster only (samples with `assignment == k`, less
    the classes with a single sample there) by its own class-balanced sampler; a cluster with
    fewer classes than a batch holds gives smaller batches, and one with no class of 2 samples
    gives no batch (the round-robin skips it).

    Args:
        assignment: int array `[N]`. Each training sample's learner.
        labels: int array `[N]`.
        num_learners: int. K.
        budget: dict with `m_per_class` and `batch_size`.
        num_batches: int. Batches of the epoch (the baseline's).
        seed: int. The run's seed.
        epoch: int. The epoch drawn (each epoch draws other batches).

    Returns:
        A list of `(learner, int64 index array)`.
    """
    from keras_dml.data import MPerClassSampler

    m, batch_size = budget["m_per_class"], budget["batch_size"]
    clusters = []
    for learner in range(num_learners):
        members = drop_single_sample_classes(np.flatnonzero(assignment == learner), labels)
        if members.size:
            clusters.append((learner, members))
    if not clusters:
        raise ValueError("No cluster has a class with 2 samples: nothing to train on.")
    queues = []
    for position, (learner, members) in enumerate(clusters):
        count = len(range(position, num_batches, len(clusters)))
        if count == 0:
            queues.append([])
            continue
        classes = np.unique(labels[members]).size
        sampler = MPerClassSampler(
            labels[members],
            m=m,
            batch_size=m * min(batch_size // m, classes),
            seed=int(np.random.SeedSequence([seed, learner]).generate_state(1)[0]),
            num_batches=count,
        )
        queues.append([members[batch] for batch in sampler.epoch_batches(epoch)])
    return [
        (clusters[step % len(clusters)][0], queues[step % len(clusters)][step // len(clusters)])
        for step in range(num_batches)
    ]


def train_and_embed_dc(
    backbone,
    train_images,
    train_labels,
    test_images,
    budget,
    seed,
    num_learners=4,
    initial_weights=None,
    recluster_every=1,
    conquer_epoch=None,
    on_batch=None,
):
    """Trains D&C with one PML `NormalizedSoftmaxLoss` per learner and embeds the test images.

    Algorithm 1 of the paper: the epochs before `conquer_epoch` are divided (re-clustered every
    `recluster_every` epochs, batches round-robin over the clusters, each training its
    learner's chunk), the epochs from it on are the conquer stage (the full embedding, a new loss
    over all dimensions, all the data). Each epoch has
    the baseline's number of batches (`MPerClassSampler` on all the data, `steps_per_epoch` when
    the budget sets it). Adam at the budget's learning rate for the network and every proxy.

    Args:
        backbone: the keras-dml backbone whose architecture is translated.
        train_images: uint8 array `[N, H, W, C]`.
        train_labels: int array `[N]`, classes `0..C-1`.
        test_images: uint8 array `[M, H, W, C]`.
        budget: dict with `epochs`, `batch_size`, `m_per_class`, `learning_rate`,
            `embedding_dim` (a multiple of `num_learners`), optionally `steps_per_epoch`.
        seed: int. Seeds PyTorch, the samplers and k-means.
        num_learners: int. K, the learners (and clusters). Defaults to `4`.
        initial_weights: str or `None`. A Keras weights file of `backbone` the translated
            backbone starts from (the pretrained regime). Defaults to `None`.
        recluster_every: int. T, the epochs between two clusterings. Defaults to `1`.
        conquer_epoch: int or `None`. The first conquer epoch; `None` (the default): divided
            to the end, no conquer stage.
        on_batch: callable or `None`. Called as `on_batch(epoch, learner, indices, net)` after
            each backward pass, before the optimizer step (`learner` is `None` in the conquer
            epoch); for tests and logging.

    Returns:
        `(test_embeddings float32 [M, d], train_seconds)`: each learner's chunk of the
        embeddings has unit norm. The train time includes the clusterings.

    Examples:
    >>> embeddings, _ = train_and_embed_dc(backbone, x, y, x_test, BUDGET, 0)  # doctest: +SKIP

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019
        (Sec. 3.2-3.3, Algorithm 1, Appendix A).
    """
    from keras_dml.data import MPerClassSampler

    dim = budget["embedding_dim"]
    if dim % num_learners:
        raise ValueError(f"embedding_dim {dim} is not a multiple of num_learners {num_learners}.")
    torch.manual_seed(seed)
    np.random.seed(seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    module, channels = translate_with_weights(backbone, initial_weights)
    net = EmbeddingNet(module, channels, dim).to(device)
    labels = np.asarray(train_labels, np.int64)
    num_classes = int(labels.max()) + 1
    rate = budget["learning_rate"]
    size = dim // num_learners
    learner_losses = [  # each learner's own proxies, in its own subspace
        pml_losses.NormalizedSoftmaxLoss(num_classes=num_classes, embedding_size=size).to(device)
        for _ in range(num_learners)
    ]
    proxies = [p for loss in learner_losses for p in loss.parameters()]
    optimizer = torch.optim.Adam(
        [{"params": net.parameters(), "lr": rate}, {"params": proxies, "lr": rate}]
    )
    # All the data, class-balanced: the conquer epoch's batches and every epoch's length.
    sampler = MPerClassSampler(
        labels,
        m=budget["m_per_class"],
        batch_size=budget["batch_size"],
        seed=seed,
        num_batches=budget.get("steps_per_epoch"),
    )
    epochs = budget["epochs"]
    images = _as_nchw(train_images).to(device)
    targets = torch.from_numpy(labels).to(device)
    start = time.perf_counter()
    assignment, conquer_loss = None, None
    net.train()
    for epoch in range(epochs):
        if conquer_epoch is not None and epoch >= conquer_epoch:
            if conquer_loss is None:  # merged: one loss over the full embedding
                conquer_loss = pml_losses.NormalizedSoftmaxLoss(
                    num_classes=num_classes, embedding_size=dim
                ).to(device)
                optimizer.add_param_group({"params": conquer_loss.parameters(), "lr": rate})
            plan = [(None, batch) for batch in sampler.epoch_batches(epoch)]
        else:
            if epoch % recluster_every == 0:
                clusters = cluster_samples(embed(net, images, num_learners), num_learners, seed)
                if assignment is not None:
                    clusters = match_clusters(assignment, clusters, num_learners)
                assignment = clusters
            plan = divided_epoch_batches(
                assignment, labels, num_learners, budget, sampler.num_batches, seed, epoch
            )
        for learner, batch in plan:
            index = torch.from_numpy(np.asarray(batch, np.int64)).to(device)
            embeddings = net(images[index])
            if learner is None:
                loss = conquer_loss(embeddings, targets[index])
            else:  # Eq. 3: learner k's loss on its own subspace
                chunk = embeddings[:, learner_slice(learner, dim, num_learners)]
                loss = learner_losses[learner](chunk, targets[index])
            optimizer.zero_grad()
            loss.backward()
            if on_batch is not None:
                on_batch(epoch, learner, np.asarray(batch), net)
            optimizer.step()
    seconds = time.perf_counter() - start
    return embed(net, _as_nchw(test_images).to(device), num_learners), seconds
