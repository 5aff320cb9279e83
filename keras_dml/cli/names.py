"""The method and loss names `keras-dml train --help` lists, written out so that help is instant.

Building the parser must not import Keras or TensorFlow (several seconds), yet the help of
`train` and `demo` lists the methods and losses, whose registries live in modules that import
Keras. These tables repeat the built-in registrations; tests/cli/test_help_imports.py checks them
against `keras_dml.methods.list_methods`, `keras_dml.losses.list_losses` and
`keras_dml.demo.demo_methods`. Plug-in methods (`--plugin`, `keras_dml.methods` entry points)
are read from the registry itself, since only importing them tells their names.
"""

import importlib.metadata

from keras_dml.cli.commands import METHOD_REGISTRY, load_entry_point
from keras_dml.cli.plugins import load_plugins

# `keras_dml.methods.list_methods(verbose=True)` of the built-in methods.
BUILTIN_METHODS = {
    "abe": "ABE-M: M attention masks on a shared trunk, shared embedding G, divergence loss",
    "baseline": "single embedding: backbone, pooling, linear layer, L2 (the reference point)",
    "bier": "BIER / A-BIER: online gradient boosting over embedding groups (+ diversity loss)",
    "dc": (
        "Divide & Conquer (CVPR 2019): K learners on K k-means clusters, re-clustered every T "
        "epochs, then merged"
    ),
    "dcml": "DCML: K learners, M learnable compositors, self-reinforced loss (CVPR 2021)",
    "hdc": (
        "Hierarchical Divide & Conquer (TPAMI 2021): progressive 2-means division, soft masks "
        "per cluster, mask orthogonality loss"
    ),
    "mheads": "M-heads: shared bottom layers, M separate copies of the top (ABE's baseline)",
}

# `keras_dml.losses.list_losses()` of the built-in losses.
BUILTIN_LOSSES = (
    "arcface",
    "binomial_deviance",
    "circle",
    "contrastive",
    "cosface",
    "cross_batch_memory",
    "fast_ap",
    "learnable_margin",
    "lifted_structure",
    "margin",
    "multi_similarity",
    "normalized_softmax",
    "npairs",
    "ntxent",
    "proxy_anchor",
    "proxy_nca",
    "snr_contrastive",
    "soft_triple",
    "subcenter_arcface",
    "supcon",
    "triplet",
    "tuplet_margin",
)

# `keras_dml.demo.demo_methods()` of the built-in methods, in the demo's order.
BUILTIN_DEMO_METHODS = ("baseline", "abe", "bier", "dc", "dcml", "hdc")

METHOD_ENTRY_POINT_GROUP = "keras_dml.methods"


def has_installed_plugins():
    """Whether an installed package registers methods (`keras_dml.methods` entry points)."""
    return bool(importlib.metadata.entry_points(group=METHOD_ENTRY_POINT_GROUP))


def method_descriptions(plugins=()):
    """`{name: description}` of the trainable methods, for `keras-dml train --help`.

    Args:
        plugins: iterable of str. The `--plugin` modules of the command line.

    Returns:
        dict. The built-in table, or the registry's (importing Keras) when `plugins` are given or
        installed packages register methods, so that their methods are listed too.
    """
    plugins = list(plugins)
    if not plugins and not has_installed_plugins():
        return dict(BUILTIN_METHODS)
    # Only importing the plug-ins and the registry (hence Keras) tells their methods.
    load_plugins(plugins)
    return load_entry_point(METHOD_REGISTRY)(verbose=True)


# `keras_dml.backbones.convert.CONVERSIONS` as {backbone: (sources, ...)}, for `keras-dml
# backbones convert --help` (tests/backbones/convert/test_cli.py checks it).
BACKBONE_CONVERSIONS = {
    "bn_inception": ("bninception",),
    "googlenet": ("torchvision", "caffe"),
    "resnet50": ("torchvision",),
}
