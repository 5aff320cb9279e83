"""The rows of `benchmarks/accuracy/run.py`: the shared budget, the loss families, the ensemble
methods with their paper losses, the ablations, and the run config each keras-dml row trains.

Usage:
    python -m benchmarks.accuracy.run --list
"""

BUDGET = {
    "epochs": 3,
    "batch_size": 128,
    "m_per_class": 4,
    "learning_rate": 1e-3,
    "embedding_dim": 128,
    "image_size": 32,
    "backbone": "vgg_small",
}

# Loss families of the baseline rows: name -> run-config `loss` entry.
LOSSES = {
    "margin": {"name": "margin", "beta": 1.2, "margin": 0.2, "sampling": "distance_weighted"},
    "multi_similarity": {"name": "multi_similarity"},
    "triplet": {"name": "triplet", "margin": 0.2, "mining": "semi-hard"},
    "contrastive": {"name": "contrastive"},
    "binomial_deviance": {"name": "binomial_deviance"},
    "proxy_nca": {"name": "proxy_nca"},
    "proxy_anchor": {"name": "proxy_anchor"},
    "normalized_softmax": {"name": "normalized_softmax"},
    "arcface": {"name": "arcface"},
    "cosface": {"name": "cosface"},
    # ABE's Eq. 10 (the hinge on the squared distance): the loss ABE and M-heads train when no
    # loss is set, so the baseline with it is their paper rows' same-loss baseline.
    "abe_contrastive": {"name": "contrastive", "similarity": "squared_euclidean", "margin": 1.0},
    # The reality-check losses, each with the library's defaults: what a user who
    # names the loss gets.
    "ntxent": {"name": "ntxent"},
    "supcon": {"name": "supcon"},
    "circle": {"name": "circle"},
    "lifted_structure": {"name": "lifted_structure"},
    "npairs": {"name": "npairs"},
    "tuplet_margin": {"name": "tuplet_margin"},
    "snr_contrastive": {"name": "snr_contrastive"},
    "fast_ap": {"name": "fast_ap"},
    "subcenter_arcface": {"name": "subcenter_arcface"},
    "soft_triple": {"name": "soft_triple"},
}

# Cross-batch memory (XBM) rows: each pair loss that XBM can wrap affordably, with a memory of 16
# batches (2048 of the ~20k training images) that starts after the first epoch (~150 steps at
# the budget's batch of 128): the paper's warm-up, since early features drift fast. Triplet is
# left out: its all/semi-hard mining costs (batch + memory)^3 terms on `[batch; memory]`.
XBM_MEMORY = {"memory_size": 2048, "warmup_steps": 150}
XBM_LOSSES = (
    "contrastive",
    "multi_similarity",
    "margin",
    "binomial_deviance",
    "ntxent",
    "supcon",
    "circle",
    "lifted_structure",
    "tuplet_margin",
    "snr_contrastive",
    "fast_ap",
)
LOSSES.update(
    {
        f"{loss}+xbm": {"name": "cross_batch_memory", "loss": LOSSES[loss], **XBM_MEMORY}
        for loss in XBM_LOSSES
    }
)

# The losses that an ensemble method's `<method>/<loss>` rows cover: the families measured before
# the reality-check losses were added (the new ones are baseline rows; `--rows` can name any
# `<method>/<loss>` of `LOSSES` all the same).
METHOD_LOSSES = (
    "margin",
    "multi_similarity",
    "triplet",
    "contrastive",
    "binomial_deviance",
    "proxy_nca",
    "proxy_anchor",
    "normalized_softmax",
    "arcface",
    "cosface",
    "abe_contrastive",
)

# The loss a method trains when its run config sets none (its paper loss built into the model),
# as a `LOSSES` entry; BIER's boosted form has no single-embedding equivalent.
BUILT_IN_LOSSES = {"abe": LOSSES["abe_contrastive"], "mheads": LOSSES["abe_contrastive"]}

# Ensemble methods: name -> (model options at the budget's embedding size, paper loss, options).
METHODS = {
    "dc": ({"num_learners": 4}, LOSSES["margin"], {"recluster_every": 1}),
    "hdc": ({"max_learners": 4}, LOSSES["margin"], {"division_every": 1, "freeze_backbone": False}),
    "bier": ({"num_learners": 3}, None, {}),
    "abe": ({"num_learners": 4}, None, {}),
    "mheads": ({"num_learners": 4}, None, {}),
    "dcml": ({"num_learners": 4, "num_compositors": 8}, LOSSES["margin"], {}),
}

# Baseline rows with one option of their loss changed (`baseline/<loss>-<ablation>`): why PML's
# `abe_contrastive` row, which can only average positive and negative pairs apart, trails
# keras-dml's joint mean so far (the reality check, docs/benchmarks.md).
LOSS_ABLATIONS = {"baseline/abe_contrastive-separate": {"balance": "separate"}}

# Reference-code settings that differ from the library's defaults: `<method>/paper` and
# `<method>/best` (and its ablations) keep them, as they were recorded; `<method>/<loss>` rows
# train with the library's defaults. Hierarchical D&C's reference code freezes the backbone for
# the epoch after each division (the default became False after hdc/best-unfrozen was measured).
REFERENCE_OPTIONS = {"hdc": {"freeze_backbone": True}}

# Ablations of a `<method>/best` row: row -> the method_options it changes. They show why an
# ensemble trails the baseline at this budget (README, "Embedding quality").
ABLATIONS = {
    "dc/best-without-conquer": {"conquer_epoch": None},  # divided to the end, never merged
    # Hierarchical D&C freezes the backbone for the epoch after each division (reference code);
    # divided every epoch, a 3-epoch run trains its backbone in the first epoch only.
    "hdc/best-unfrozen": {"freeze_backbone": False},
    # D&C with a class loss keeps one proxy per class in every learner's slice, trained only
    # while the class is in that learner's cluster. Re-clustering (here before epochs 0 and 1)
    # moves classes to learners whose proxies for them were only ever negatives. Dividing once
    # (T = the budget's 3 epochs) keeps each class with one learner; the margin loss (`paper`),
    # which has no proxies, tells a proxy cost from the cost of dividing once.
    "dc/proxy_nca-fixed-clusters": {"recluster_every": 3},
    "dc/paper-fixed-clusters": {"recluster_every": 3},
    # The pretrained regime's ablations: divided once, at the start.
    "dc/best-fixed-clusters": {"recluster_every": 3},
}

# Rows with one model argument or optimizer setting changed (`<method>/<variant>-<ablation>`,
# trained with that variant's loss): why ABE trailed the baseline with Proxy-NCA. ABE cut
# `vgg_small` after block1 then (masks on 64 low-level channels at 16x16, blocks 2-3 run once per
# learner); `early-branch` pins that cut, so the rows recorded with it keep their
# meaning now that ABE's default cut is after block2 (masks on 8x8 x 128 mid-level features,
# G = block3 only). `no-divergence` drops the divergence loss and `attention-lr10` trains the
# attention trunk and masks 10x faster, both measured on the block1 cut, which they pin.
EARLY_BRANCH = {"branch_point": "block1", "trunk_end": "block2"}
MODEL_ABLATIONS = {
    "abe/paper-early-branch": {"model": EARLY_BRANCH},
    "abe/best-early-branch": {"model": EARLY_BRANCH},
    "abe/proxy_nca-early-branch": {"model": EARLY_BRANCH},
    "abe/proxy_nca-no-divergence": {"model": {**EARLY_BRANCH, "lambda_div": 0.0}},
    "abe/proxy_nca-attention-lr10": {
        "model": EARLY_BRANCH,
        "optimizer": {"lr_multipliers": {"attention": 10.0}},
    },
    # Why D&C, hierarchical D&C, DCML and ABE trail their baselines when fine-tuned from the
    # pretrained backbone (docs/benchmarks.md, "Why D&C and its relatives trail here:
    # ablations"): the learners' size (two of 64 instead of four of 32), DCML's compositor count,
    # ABE without its divergence loss, and the papers' fine-tuning, where the pretrained
    # backbone learns 10x slower than the new layers (`^block`: the budget backbone's
    # variables; the baseline row with it is the comparison).
    "dc/best-2-learners": {"model": {"num_learners": 2}},
    "dc/best-backbone-lr0.1": {"optimizer": {"lr_multipliers": {"^block": 0.1}}},
    "baseline/normalized_softmax-backbone-lr0.1": {
        "optimizer": {"lr_multipliers": {"^block": 0.1}}
    },
    "dcml/best-4-compositors": {"model": {"num_compositors": 4}},
    "abe/best-no-divergence": {"model": {"lambda_div": 0.0}},
    # M-heads split at ABE's cut (block2): separate `G_m` (block3 each) against ABE's attention
    # masks and one shared `G` over the same `S`; DCML without its composites' losses (Eq. 8
    # with every `lambda_m` = 0): `J_dis` on the concatenation alone, the baseline's objective.
    "mheads/best-block2": {"model": {"branch_point": "block2"}},
    "dcml/best-no-subtasks": {"model": {"lambda_subtask": 0.0}},
    # Why FastAP trails PML (docs/benchmarks.md, "Reality check"): Adam with PyTorch's epsilon,
    # next to the PML rows with Keras's (`PML_STARTS`).
    "baseline/fast_ap-pytorch-epsilon": {"optimizer": {"epsilon": 1e-8}},
}

# keras-hub backbones (`keras_dml.backbones.hub`) for the `<row>-<name>` rows: `HUB_ROWS` on that
# backbone, from random initialisation at the budget, paired with the baseline on the same one.
# Name -> (keras-hub class, its arguments, its image converter's scale and offset). Sized to
# train in about the budget backbone's time on this project's CPU machine: ResNet-18's basic
# blocks in full, a 4-block ViT with patch 4 at 32 px. `run.py` saves each as a preset folder
# unless `--hub-preset NAME=PRESET` names another (a hub handle: its own weights).
IMAGENET_SCALE = [1 / (255.0 * std) for std in (0.229, 0.224, 0.225)]
IMAGENET_OFFSET = [-mean / std for mean, std in zip((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))]
HUB_BACKBONES = {
    "hub_resnet": (
        "ResNetBackbone",
        {
            "input_conv_filters": [64],
            "input_conv_kernel_sizes": [7],
            "stackwise_num_filters": [64, 128, 256, 512],
            "stackwise_num_blocks": [2, 2, 2, 2],
            "stackwise_num_strides": [1, 2, 2, 2],
            "block_type": "basic_block",
            "use_pre_activation": False,
            "image_shape": [None, None, 3],
        },
        {"scale": IMAGENET_SCALE, "offset": IMAGENET_OFFSET},
    ),
    "hub_vit": (
        "ViTBackbone",
        {
            "image_shape": [32, 32, 3],
            "patch_size": 4,
            "num_layers": 4,
            "num_heads": 3,
            "hidden_dim": 96,
            "mlp_dim": 192,
        },
        {"scale": 1 / 127.5, "offset": -1.0},
    ),
}
# The rows each keras-hub backbone trains (`{best}`: the `--best-loss`).
HUB_ROWS = ("baseline/{best}", "dc/best")


def hub_backbone_of(row):
    """The `HUB_BACKBONES` name a row trains on (`dc/best-hub_vit` -> `hub_vit`), or `None`."""
    return next((name for name in HUB_BACKBONES if row.endswith(f"-{name}")), None)


PML_RECIPES = (
    "normalized_softmax",
    "proxy_anchor",
    "multi_similarity",
    "margin",
    "arcface",
    "proxy_nca",
    # The table's other losses PML has (not binomial deviance, nor Hadsell et al.'s squared
    # hinge of `contrastive`; torch_reference.py says how each is aligned).
    "cosface",
    "triplet",
    "abe_contrastive",
    # The reality-check losses, with the settings of keras-dml's defaults (torch_reference.py).
    "ntxent",
    "supcon",
    "circle",
    "lifted_structure",
    "npairs",
    "tuplet_margin",
    "snr_contrastive",
    "fast_ap",
    "subcenter_arcface",
    "soft_triple",
)


# PML rows whose loss is defined otherwise than keras-dml's row of the same name (PML has no
# such option; benchmarks/accuracy/torch_reference.py says how): triplet's semi-hard miner, and the
# reduction of `abe_contrastive` (positive and negative pairs averaged apart). Comparisons of
# "the same loss" leave them out.
PML_DIFFERENT_DEFINITIONS = ("triplet", "abe_contrastive")

# PyTorch rows of an ensemble method written apart from keras-dml (`torch_divide_and_conquer.py`:
# D&C from the paper with PML's loss), at the settings of keras-dml's `<method>/best` row with
# that recipe's loss; row -> (method, PML recipe). The table pairs each with `pml/<recipe>`.
TORCH_METHOD_ROWS = {"pml/dc-normalized_softmax": ("dc", "normalized_softmax")}

# PML rows that start where Keras starts, or partly (`torch_reference.train_and_embed`'s
# `start`): `pml/<recipe>-keras-start` with Keras's initialisation of the backbone and embedding
# layer and Keras Adam's epsilon, `pml/<recipe>-keras-epsilon` with that epsilon alone. Against
# `pml/<recipe>` they measure what PyTorch's own start is worth. Suffix -> start.
PML_STARTS = {"-keras-start": "keras", "-keras-epsilon": "keras-epsilon"}
PML_START_RECIPES = ("circle", "fast_ap", "normalized_softmax")


def pml_recipe_and_start(row):
    """`(recipe, start)` of a plain `pml/` row: `("circle", "keras")` for
    `pml/circle-keras-start`, `("circle", "pytorch")` for `pml/circle`."""
    recipe = row.split("/", 1)[1]
    for suffix, start in PML_STARTS.items():
        if recipe.endswith(suffix):
            return recipe[: -len(suffix)], start
    return recipe, "pytorch"


def conquer_epoch_of(epochs):
    """The D&C rows' conquer epoch: Algorithm 1 of the paper ends by merging the learners and
    fine-tuning the full embedding on the entire dataset, here the budget's last epoch (`None`,
    no conquer stage, with a one-epoch budget)."""
    return epochs - 1 if epochs > 1 else None


def row_names(best_loss):
    """Every row, in table order.

    `<method>/best` trains with `best_loss`; `<method>/<loss>` with any other loss of `LOSSES`
    (e.g. `bier/arcface`), so a method's rows with several losses stay apart in one results file.
    """
    names = ["defaults"] + [f"baseline/{loss}" for loss in LOSSES] + list(LOSS_ABLATIONS)
    names += [row for row in MODEL_ABLATIONS if row.startswith("baseline/")]
    for method in METHODS:
        names += [f"{method}/paper", f"{method}/best"]
        names += [row for row in ABLATIONS if row.startswith(f"{method}/")]
        names += [row for row in MODEL_ABLATIONS if row.startswith(f"{method}/")]
        names += [f"{method}/{loss}" for loss in METHOD_LOSSES if loss != best_loss]
    names += [f"pml/{recipe}" for recipe in PML_RECIPES]
    names += [f"pml/{recipe}{suffix}" for recipe in PML_START_RECIPES for suffix in PML_STARTS]
    names += list(TORCH_METHOD_ROWS)
    for hub in HUB_BACKBONES:
        names += [f"{row.format(best=best_loss)}-{hub}" for row in HUB_ROWS]
    return names


def keras_config(
    row,
    dataset,
    budget,
    best_loss,
    seed,
    dataset_options=None,
    backbone_weights=None,
    hub_preset=None,
):
    """The run configuration of a keras-dml row.

    Args:
        row: str. A row name of `row_names` (not `pml/...`).
        dataset: str. Registered dataset name.
        budget: dict. The shared budget (`BUDGET` with the `--set` overrides).
        best_loss: str. The loss of the `<method>/best` rows (a key of `LOSSES`).
        seed: int.
        dataset_options: dict or `None`. Options of the dataset loader.
        backbone_weights: str or `None`. Weights file the backbone starts from (the
            pretrained regime), or `"imagenet"`: a keras-hub row's preset weights; not allowed
            for `defaults`, which sets nothing but the data.
        hub_preset: str or `None`. The preset of a `<row>-<hub>` row (`HUB_BACKBONES`).
            Defaults to the hub name.
    """
    hub = hub_backbone_of(row)
    if hub is not None:
        config = keras_config(
            row.removesuffix(f"-{hub}"), dataset, budget, best_loss, seed, dataset_options
        )
        preset = hub_preset or hub
        return {
            **config,
            "backbone": {"name": "keras_hub", "preset": preset, "weights": backbone_weights},
        }
    common = {
        "dataset": dataset,
        "dataset_options": dict(dataset_options or {}),
        "epochs": budget["epochs"],
        "seed": seed,
        "eval_every": budget["epochs"],
    }
    if row == "defaults":
        if backbone_weights is not None:
            raise ValueError("The `defaults` row runs in the scratch regime only.")
        return {"method": "baseline", **common}
    config = {
        **common,
        "image_size": budget["image_size"],
        "backbone": {"name": budget["backbone"], "weights": backbone_weights},
        "batch_size": budget["batch_size"],
        "m_per_class": budget["m_per_class"],
        "optimizer": {"name": "adam", "learning_rate": budget["learning_rate"]},
    }
    method, variant = row.split("/")
    changed = MODEL_ABLATIONS.get(row, {})
    optimizer = {**config["optimizer"], **changed.get("optimizer", {})}
    if method == "baseline":
        return {
            **config,
            "method": "baseline",
            "model": {"embedding_dim": budget["embedding_dim"]},
            "loss": {**LOSSES[variant.split("-")[0]], **LOSS_ABLATIONS.get(row, {})},
            "optimizer": optimizer,
        }
    model, paper_loss, options = METHODS[method]
    if method == "dcml":  # DCML sizes each learner; the others split one embedding
        model = {**model, "learner_dim": budget["embedding_dim"] // model["num_learners"]}
    else:
        model = {**model, "embedding_dim": budget["embedding_dim"]}
    conquer = conquer_epoch_of(budget["epochs"])
    if method == "dc" and conquer is not None:
        # Set explicitly (the library's "auto" gives the same at 3 epochs) so each record names
        # the epoch it used.
        options = {**options, "conquer_epoch": conquer, "conquer_sampling": "all"}
    base = variant.split("-")[0]  # paper, best or a loss name, before any ablation suffix
    if base in ("paper", "best"):
        options = {**options, **REFERENCE_OPTIONS.get(method, {})}
    options = {**options, **ABLATIONS.get(row, {})}
    model = {**model, **changed.get("model", {})}
    if base == "paper":
        loss = paper_loss
    else:  # best, best-<ablation>, a loss name, or <loss>-<ablation>
        loss = LOSSES.get(base, LOSSES[best_loss])
    return {
        **config,
        "method": method,
        "model": model,
        "loss": loss,
        "method_options": options,
        "optimizer": optimizer,
    }
