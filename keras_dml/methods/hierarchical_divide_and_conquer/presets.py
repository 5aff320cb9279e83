"""Hierarchical D&C's hyperparameters per dataset (TPAMI 2021, Tab. 9) as run configurations.

`recipes/configs/hdc_<name>.json` are `preset_config(name)` written out (a test keeps them equal).
"""

import copy

from keras_dml.methods.hierarchical_divide_and_conquer.spec import NAME

# Tab. 9: learning rate, weight decay, lambda (Eq. 6), K_max, E, fine-tuning epoch, total epochs.
PRESETS = {
    "cub200": {
        "learning_rate": 1e-5,
        "weight_decay": 1e-3,
        "orthogonality_weight": 1.0,
        "max_learners": 4,
        "division_every": 10,
        "finetune_epoch": None,
        "epochs": 120,
    },
    "cars196": {
        "learning_rate": 1e-5,
        "weight_decay": 1e-3,
        "orthogonality_weight": 1.0,
        "max_learners": 4,
        "division_every": 10,
        "finetune_epoch": None,
        "epochs": 120,
    },
    "inshop": {
        "learning_rate": 1e-5,
        "weight_decay": 1e-4,
        "orthogonality_weight": 0.2,
        "max_learners": 8,
        "division_every": 2,
        "finetune_epoch": None,
        "epochs": 400,
    },
    "sop": {
        "learning_rate": 1e-5,
        "weight_decay": 1e-4,
        "orthogonality_weight": 0.01,
        "max_learners": 32,
        "division_every": 2,
        "finetune_epoch": 80,
        "epochs": 170,
        "batch_size": 80,
        "m_per_class": 2,
    },
    "vehicleid": {
        "learning_rate": 1e-5,
        "weight_decay": 1e-4,
        "orthogonality_weight": 5e-4,
        "max_learners": 16,
        "division_every": 2,
        "finetune_epoch": 80,
        "epochs": 170,
    },
}

# Values not in Tab. 9, from the authors' PyTorch code (SOP example: batch 80 with 2 per class).
# Keras' Adam decouples `weight_decay` (AdamW); the authors' Adam adds it to the gradient.
COMMON = {
    "embedding_dim": 512,
    "mask_lr_multiplier": 100.0,
    "batch_size": 128,
    "m_per_class": 4,
    "image_size": 224,
}


def list_presets():
    """Dataset names with a preset, sorted."""
    return sorted(PRESETS)


def get_preset(name):
    """The Tab. 9 values for `name` merged over `COMMON` (a new dict)."""
    if name not in PRESETS:
        raise ValueError(f"No hierarchical D&C preset {name!r}. Known: {list_presets()}.")
    return {**COMMON, **copy.deepcopy(PRESETS[name])}


def preset_config(name, fixed_masks=False):
    """A complete run configuration for `name` from Tab. 9 (ResNet-50, GPU).

    Args:
        name: str. One of `list_presets()`.
        fixed_masks: bool. "Ours (fix)" instead of learned masks. Defaults to `False`.

    Examples:
    >>> preset_config("sop")["method_options"]["finetune_epoch"]
    80

    References:
        Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI 2021,
        Appendix B, Tab. 9.
    """
    preset = get_preset(name)
    return {
        "description": (
            f"Hierarchical D&C (TPAMI 2021, Tab. 9) on {name}: ResNet-50 (frozen BN), d=512, "
            f"K_max={preset['max_learners']}, E={preset['division_every']}, "
            f"lambda={preset['orthogonality_weight']}, margin loss, Adam "
            f"{preset['learning_rate']}. GPU run. Backbone: torchvision's ResNet-50 v1.5 "
            "(ImageNet mean/std on RGB in [0, 1]), converted from torchvision's IMAGENET1K_V1 "
            "file resnet50-0676ba61.pth (sha256 prefix 0676ba61, from its published file name; "
            "the full digest is not published)."
        ),
        "paper": "divide_and_conquer_hierarchical_tpami",
        "method": NAME,
        "dataset": name,
        "image_size": preset["image_size"],
        "backbone": {
            "name": "resnet50",
            "variant": "v1.5",
            "weights": {
                "pretrained": "imagenet",
                "source_file": "resnet50-0676ba61.pth",
                "source_sha256": "0676ba61",
            },
            "freeze_batchnorm": True,
        },
        "model": {
            "embedding_dim": preset["embedding_dim"],
            "max_learners": preset["max_learners"],
            "fixed_masks": bool(fixed_masks),
            "orthogonality_weight": preset["orthogonality_weight"],
            "mask_lr_multiplier": preset["mask_lr_multiplier"],
        },
        "loss": {"name": "margin", "beta": 1.2, "margin": 0.2, "sampling": "distance_weighted"},
        "optimizer": {
            "name": "adam",
            "learning_rate": preset["learning_rate"],
            "weight_decay": preset["weight_decay"],
        },
        "epochs": preset["epochs"],
        "batch_size": preset["batch_size"],
        "m_per_class": preset["m_per_class"],
        "seed": 0,
        "method_options": {
            "division_every": preset["division_every"],
            "finetune_epoch": preset["finetune_epoch"],
            "cluster_on": "embedding",
            "freeze_backbone": True,
        },
    }
