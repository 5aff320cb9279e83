"""The PyTorch / pytorch-metric-learning side of `benchmarks/accuracy/run.py`.

What a PyTorch user gets on the same data and budget: the same backbone (translated layer by layer
from the keras-dml backbone, so the architecture is equal; PyTorch's own default initialisation,
as a PyTorch user would have it, or in the pretrained regime the pretrained Keras backbone's
weights, copied by `copy_backbone_weights`), global average pooling, a linear embedding, the same
class-balanced batches (`keras_dml.data.MPerClassSampler`, same seed), Adam, and a loss (with its
miner) from pytorch-metric-learning (PML). Evaluation uses keras-dml's `evaluate` on the
L2-normalised embeddings, so both sides are measured by the same code.

Imported only when torch and PML are installed (the `pml` extra: `pip install -e ".[pml]"`;
CI installs it, and the tests of this module skip without it).
"""

import inspect
import time

import keras
import numpy as np
import torch
from pytorch_metric_learning import distances as pml_distances
from pytorch_metric_learning import losses as pml_losses
from pytorch_metric_learning import miners as pml_miners
from pytorch_metric_learning import reducers as pml_reducers
from pytorch_metric_learning import regularizers as pml_regularizers

# name -> (loss factory(num_classes, dim), miner factory or None, proxy learning-rate factor).
# Loss settings are PML's defaults unless noted; ProxyAnchor's proxies use the x100 learning rate
# of Kim et al. (2020)'s code, as PML's documentation recommends.
RECIPES = {
    "normalized_softmax": (
        lambda c, d: pml_losses.NormalizedSoftmaxLoss(num_classes=c, embedding_size=d),
        None,
        1.0,
    ),
    "proxy_anchor": (
        lambda c, d: pml_losses.ProxyAnchorLoss(num_classes=c, embedding_size=d),
        None,
        100.0,
    ),
    "multi_similarity": (
        lambda c, d: pml_losses.MultiSimilarityLoss(),
        lambda: pml_miners.MultiSimilarityMiner(epsilon=0.1),
        1.0,
    ),
    "margin": (
        lambda c, d: pml_losses.MarginLoss(margin=0.2, nu=0, beta=1.2),
        lambda: pml_miners.DistanceWeightedMiner(cutoff=0.5, nonzero_loss_cutoff=1.4),
        1.0,
    ),
    "arcface": (
        lambda c, d: pml_losses.ArcFaceLoss(num_classes=c, embedding_size=d),
        None,
        1.0,
    ),
    # keras-dml's Proxy-NCA scales embeddings and proxies to norm `scale` (3), so its squared
    # distances are scale**2 times those of PML's unit vectors: softmax_scale = scale**2 gives the
    # same logits (PML's default, 1, is a far softer softmax). PML keeps the true class in the
    # denominator, which keras-dml leaves out by default (the paper's NCA form); PML has no
    # option for that.
    "proxy_nca": (
        lambda c, d: pml_losses.ProxyNCALoss(
            num_classes=c, embedding_size=d, softmax_scale=_keras_dml_proxy_nca_scale() ** 2
        ),
        None,
        1.0,
    ),
    # The accuracy table's other losses that PML has (not binomial deviance), with the
    # settings of their `baseline/<loss>` rows (rows.LOSSES) where PML has the option.
    # CosFace: PML's defaults are keras-dml's (scale 64, margin 0.35), the same definition.
    "cosface": (
        lambda c, d: pml_losses.CosFaceLoss(num_classes=c, embedding_size=d, margin=0.35, scale=64),
        None,
        1.0,
    ),
    # Triplet, margin 0.2 with semi-hard negatives. The mining differs: keras-dml's FaceNet
    # miner takes, per positive pair, the closest negative farther than the positive; PML's
    # "semihard" miner takes every negative between the positive's distance and it plus the
    # margin, and PML's default reducer averages the non-zero triplet losses only.
    "triplet": (
        lambda c, d: pml_losses.TripletMarginLoss(margin=0.2),
        lambda: pml_miners.TripletMarginMiner(margin=0.2, type_of_triplets="semihard"),
        1.0,
    ),
    # ABE's contrastive loss (Eq. 10: d^2 for positives, relu(1 - d^2) for negatives, on squared
    # distances) is PML's ContrastiveLoss on `LpDistance(power=2)`. The reduction differs:
    # keras-dml averages all pairs together (`balance="joint"`); PML has no such option and
    # averages the positive and negative pairs apart (`MeanReducer`, keras-dml's
    # `balance="separate"`; PML's default reducer would also skip zero losses). keras-dml's
    # `contrastive` row (Hadsell et al.'s squared hinge on the distance) has no PML row: PML's
    # ContrastiveLoss hinges on the distance without squaring, another loss.
    "abe_contrastive": (
        lambda c, d: pml_losses.ContrastiveLoss(
            pos_margin=0.0,
            neg_margin=1.0,
            distance=pml_distances.LpDistance(power=2),
            reducer=pml_reducers.MeanReducer(),
        ),
        None,
        1.0,
    ),
    # The reality-check losses with keras-dml's default settings (the alignment of each
    # definition: tests/reference/make_pml_values.py). PML takes angles in degrees where
    # keras-dml takes radians; no miner (keras-dml's defaults use every pair).
    "ntxent": (lambda c, d: pml_losses.NTXentLoss(temperature=0.07), None, 1.0),
    "supcon": (lambda c, d: pml_losses.SupConLoss(temperature=0.1), None, 1.0),
    "circle": (lambda c, d: pml_losses.CircleLoss(m=0.4, gamma=80), None, 1.0),
    "lifted_structure": (
        lambda c, d: pml_losses.LiftedStructureLoss(neg_margin=1.0, pos_margin=0.0),
        None,
        1.0,
    ),
    "npairs": (lambda c, d: pml_losses.NPairsLoss(), None, 1.0),
    "tuplet_margin": (
        lambda c, d: pml_losses.TupletMarginLoss(margin=float(np.degrees(0.1)), scale=64),
        None,
        1.0,
    ),
    "snr_contrastive": (
        lambda c, d: pml_losses.SignalToNoiseRatioContrastiveLoss(pos_margin=0.0, neg_margin=1.0),
        None,
        1.0,
    ),
    "fast_ap": (lambda c, d: pml_losses.FastAPLoss(num_bins=10), None, 1.0),
    "subcenter_arcface": (
        lambda c, d: pml_losses.SubCenterArcFaceLoss(
            num_classes=c, embedding_size=d, margin=float(np.degrees(0.5)), scale=64, sub_centers=3
        ),
        None,
        1.0,
    ),
    # SoftTriple's centers at 100x the learning rate (Qian et al.'s code, keras-dml's
    # `recommended_lr_multipliers`) and its Eq. 10 regulariser with keras-dml's tau.
    "soft_triple": (
        lambda c, d: pml_losses.SoftTripleLoss(
            num_classes=c,
            embedding_size=d,
            centers_per_class=10,
            la=20,
            gamma=0.1,
            margin=0.01,
            weight_regularizer=pml_regularizers.SparseCentersRegularizer(c, 10),
            weight_reg_weight=0.2,
        ),
        None,
        100.0,
    ),
}


def _keras_dml_proxy_nca_scale():
    """keras-dml's default Proxy-NCA `scale`, read from its signature so the recipes stay equal."""
    import inspect

    from keras_dml.losses import proxy_nca_loss

    return inspect.signature(proxy_nca_loss).parameters["scale"].default


class _Normalize(torch.nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, -1, 1, 1))

    def forward(self, x):
        return (x - self.mean) / self.std


def translate_backbone(backbone):
    """A `torch.nn.Sequential` with the architecture of a sequential keras-dml backbone.

    Supports the layer types of the plain ConvNets (`ImageNormalization`, `Conv2D`,
    `BatchNormalization`, `ReLU`, `MaxPooling2D`, `ZeroPadding2D`); BatchNorm momentum and epsilon
    are carried over (PyTorch's momentum is `1 - keras_momentum`). Weights are not copied
    (`copy_backbone_weights` does).

    Args:
        backbone: a functional `keras.Model` from `keras_dml.backbones.get`.

    Returns:
        `(module, channels)`: the module (NCHW float input in [0, 255]) and its output channels.

    Raises:
        ValueError: for a layer type the translation does not cover (e.g. a residual add).
    """
    modules, channels = [], int(backbone.inputs[0].shape[-1])
    for layer in backbone.layers[1:]:
        kind = type(layer).__name__
        config = layer.get_config()
        if kind == "ImageNormalization":
            if config["mode"] == "caffe" or config.get("reverse_channels"):
                raise ValueError("Channel reversal (mode='caffe') is not translated.")
            # y = (x - mean) / std per channel: read mean and std off the layer's outputs.
            probe = np.zeros((2, 1, 1, channels), np.float32)
            probe[1] = 1.0
            zero, one = (np.asarray(v).reshape(-1) for v in layer(probe))
            std = 1.0 / (one - zero)
            modules.append(_Normalize((-zero * std).tolist(), std.tolist()))
        elif kind == "Conv2D":
            kernel, strides = config["kernel_size"], config["strides"]
            padding = "same" if config["padding"] == "same" else 0
            modules.append(
                torch.nn.Conv2d(
                    channels,
                    config["filters"],
                    kernel,
                    stride=strides,
                    padding=padding,
                    bias=config["use_bias"],
                )
            )
            channels = config["filters"]
        elif kind == "BatchNormalization":
            modules.append(
                torch.nn.BatchNorm2d(
                    channels, eps=config["epsilon"], momentum=1.0 - config["momentum"]
                )
            )
        elif kind == "ReLU":
            modules.append(torch.nn.ReLU(inplace=True))
        elif kind == "MaxPooling2D":
            if config["padding"] != "valid":
                raise ValueError(f"Only valid max pooling is translated; layer {layer.name}.")
            modules.append(torch.nn.MaxPool2d(config["pool_size"], config["strides"]))
        elif kind == "ZeroPadding2D":
            (top, bottom), (left, right) = config["padding"]
            modules.append(torch.nn.ZeroPad2d((left, right, top, bottom)))
        else:
            raise ValueError(f"No PyTorch translation for layer {layer.name} ({kind}).")
    return torch.nn.Sequential(*modules), channels


def _numpy(variable):
    import keras

    return keras.ops.convert_to_numpy(variable)


def copy_backbone_weights(backbone, module):
    """Copies a keras-dml backbone's weights into the module `translate_backbone` made of it.

    Layer by layer, in the same order: a `Conv2D`'s kernel (Keras `[kh, kw, in, out]` to PyTorch
    `[out, in, kh, kw]`) and bias, a `BatchNormalization`'s gamma, beta, moving mean and moving
    variance (PyTorch's weight, bias, running mean and running variance). The other translated
    layers hold no weights.

    Args:
        backbone: the functional `keras.Model` that `translate_backbone` translated.
        module: the `torch.nn.Sequential` it returned.

    Raises:
        ValueError: `module` is not `backbone`'s translation (another layer count or kind).

    Examples:
    >>> module, _ = translate_backbone(backbone)  # doctest: +SKIP
    >>> copy_backbone_weights(backbone, module)  # doctest: +SKIP
    """
    layers = backbone.layers[1:]
    if len(layers) != len(module):
        raise ValueError(
            f"The module has {len(module)} layers, the backbone {len(layers)}: translate the "
            "backbone with `translate_backbone` first."
        )
    with torch.no_grad():
        for layer, target in zip(layers, module):
            kind = type(layer).__name__
            if kind == "Conv2D":
                if not isinstance(target, torch.nn.Conv2d):
                    raise ValueError(f"Layer {layer.name} (Conv2D) meets {target}.")
                kernel = _numpy(layer.kernel).transpose(3, 2, 0, 1)
                target.weight.copy_(torch.from_numpy(kernel.copy()))
                if layer.use_bias:
                    target.bias.copy_(torch.from_numpy(_numpy(layer.bias)))
            elif kind == "BatchNormalization":
                if not isinstance(target, torch.nn.BatchNorm2d):
                    raise ValueError(f"Layer {layer.name} (BatchNormalization) meets {target}.")
                # A Keras BatchNormalization without scale (center) has gamma 1 (beta 0).
                if layer.gamma is not None:
                    target.weight.copy_(torch.from_numpy(_numpy(layer.gamma)))
                if layer.beta is not None:
                    target.bias.copy_(torch.from_numpy(_numpy(layer.beta)))
                target.running_mean.copy_(torch.from_numpy(_numpy(layer.moving_mean)))
                target.running_var.copy_(torch.from_numpy(_numpy(layer.moving_variance)))


class EmbeddingNet(torch.nn.Module):
    """Backbone, global average pooling, linear embedding (the keras-dml baseline's shape)."""

    def __init__(self, backbone, channels, dim):
        super().__init__()
        self.backbone = backbone
        self.head = torch.nn.Linear(channels, dim)

    def forward(self, images):
        return self.head(self.backbone(images).mean(dim=(2, 3)))


# Each framework's default Adam epsilon, read from its own signature (1e-8 and 1e-7 today).
PYTORCH_EPSILON = inspect.signature(torch.optim.Adam).parameters["eps"].default
KERAS_EPSILON = inspect.signature(keras.optimizers.Adam).parameters["epsilon"].default
# start -> (whose initialisation, Adam's epsilon).
STARTS = {
    "pytorch": ("pytorch", PYTORCH_EPSILON),
    "keras": ("keras", KERAS_EPSILON),
    "keras-epsilon": ("pytorch", KERAS_EPSILON),
}


def keras_start(backbone, net):
    """Gives `net` the Keras initialisation: `backbone`'s weights as built (Glorot-uniform
    kernels, zero biases, unit BatchNorm scales) and a Keras `Dense` layer's for the embedding
    (where PyTorch draws Kaiming-uniform weights and non-zero biases)."""
    copy_backbone_weights(backbone, net.backbone)
    dense = keras.layers.Dense(net.head.out_features)
    dense.build((None, net.head.in_features))
    with torch.no_grad():
        net.head.weight.copy_(torch.from_numpy(_numpy(dense.kernel).T.copy()))
        net.head.bias.copy_(torch.from_numpy(_numpy(dense.bias)))


def _as_nchw(images):
    images = np.asarray(images, np.float32)
    if images.shape[-1] == 1:
        images = np.repeat(images, 3, axis=-1)
    return torch.from_numpy(np.ascontiguousarray(images.transpose(0, 3, 1, 2)))


def translate_with_weights(backbone, initial_weights=None):
    """`translate_backbone(backbone)`, starting from `initial_weights` when given.

    Args:
        backbone: the keras-dml backbone.
        initial_weights: str or `None`. A Keras weights file of `backbone` (e.g. the pretrained
            regime's `backbone.weights.h5`): loaded into `backbone`, then copied into the
            module (`copy_backbone_weights`). `None`: PyTorch's default initialisation.

    Returns:
        `(module, channels)`, as `translate_backbone`.
    """
    module, channels = translate_backbone(backbone)
    if initial_weights is not None:
        backbone.load_weights(initial_weights)
        copy_backbone_weights(backbone, module)
    return module, channels


def train_and_embed(
    recipe,
    backbone,
    train_images,
    train_labels,
    test_images,
    budget,
    seed,
    initial_weights=None,
    start="pytorch",
):
    """Trains one PML recipe and embeds the test images.

    Args:
        recipe: str. A key of `RECIPES`.
        backbone: the keras-dml backbone whose architecture is translated.
        train_images: uint8 array `[N, H, W, C]`.
        train_labels: int array `[N]`, classes `0..C-1`.
        test_images: uint8 array `[M, H, W, C]`.
        budget: dict with `epochs`, `batch_size`, `m_per_class`, `learning_rate`,
            `embedding_dim`, `steps_per_epoch`.
        seed: int.
        initial_weights: str or `None`. A Keras weights file of `backbone` the translated
            backbone starts from (the pretrained regime); `None`: PyTorch's initialisation.
        start: `"pytorch"` (PyTorch's initialisation and Adam epsilon), `"keras"` (where a
            Keras user starts: `keras_start`'s initialisation and Keras's epsilon) or
            `"keras-epsilon"` (PyTorch's initialisation, Keras's epsilon): what the start is
            worth.

    Returns:
        `(test_embeddings float32 [M, D], train_seconds)`.
    """
    if start not in STARTS:
        raise ValueError(f"`start` must be one of {tuple(STARTS)}. Received: start={start!r}")
    initialisation, epsilon = STARTS[start]
    from keras_dml.data import MPerClassSampler

    torch.manual_seed(seed)
    np.random.seed(seed)
    # A GPU when PyTorch sees one (the benchmark's GPU runs), else the CPU.
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    make_loss, make_miner, proxy_factor = RECIPES[recipe]
    module, channels = translate_with_weights(backbone, initial_weights)
    net = EmbeddingNet(module, channels, budget["embedding_dim"])
    if initialisation == "keras":
        keras_start(backbone, net)
    net = net.to(device)
    num_classes = int(np.max(train_labels)) + 1
    loss_fn = make_loss(num_classes, budget["embedding_dim"]).to(device)
    miner = make_miner() if make_miner else None
    groups = [{"params": net.parameters(), "lr": budget["learning_rate"]}]
    loss_params = list(loss_fn.parameters())
    if loss_params:
        groups.append({"params": loss_params, "lr": budget["learning_rate"] * proxy_factor})
    optimizer = torch.optim.Adam(groups, eps=epsilon)
    sampler = MPerClassSampler(
        train_labels,
        m=budget["m_per_class"],
        batch_size=budget["batch_size"],
        seed=seed,
        num_batches=budget.get("steps_per_epoch"),
    )
    images = _as_nchw(train_images).to(device)
    labels = torch.from_numpy(np.asarray(train_labels, np.int64)).to(device)
    start = time.perf_counter()
    net.train()
    for _ in range(budget["epochs"]):
        for batch in sampler.epoch_batches():
            index = torch.from_numpy(np.asarray(batch, np.int64)).to(device)
            embeddings = net(images[index])
            batch_labels = labels[index]
            pairs = miner(embeddings, batch_labels) if miner else None
            loss = loss_fn(embeddings, batch_labels, pairs)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    seconds = time.perf_counter() - start
    net.eval()
    outputs = []
    test = _as_nchw(test_images).to(device)
    with torch.no_grad():
        for begin in range(0, len(test), 512):
            outputs.append(net(test[begin : begin + 512]).cpu().numpy())
    return np.concatenate(outputs).astype(np.float32), seconds
