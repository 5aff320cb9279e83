"""Run-configuration hooks of ABE and M-heads (`keras-dml train --method abe | mheads`).

The `model` entry of a configuration holds the constructor arguments of `ABE` / `MHeads`
(`num_learners`, `embedding_dim`, `lambda_div`, ...). The loss is part of the model (Eq. 8-10):
by default the paper's contrastive loss (Eq. 10); a top-level `loss` entry (or `model.metric_loss`)
replaces it, e.g. `{"name": "contrastive", "margin": 0.5}`.
"""

from keras_dml.training.methods import MethodSpec, build_optimizer


def model_options(config):
    """`config["model"]` with a top-level `loss` entry mapped to `metric_loss`."""
    options = dict(config.get("model", {}))
    if config.get("loss"):
        if options.get("metric_loss") is not None:
            raise ValueError(
                "The metric loss is set twice: in `loss` and in `model.metric_loss`. Keep one."
            )
        options["metric_loss"] = dict(config["loss"])
    return options


def build_abe(config, backbone):
    """Builds an uncompiled `ABE` from `config["model"]` (constructor keyword arguments)."""
    from keras_dml.models.abe.model import ABE

    return ABE(backbone, **model_options(config))


def build_mheads(config, backbone):
    """Builds an uncompiled `MHeads` from `config["model"]` (constructor keyword arguments)."""
    from keras_dml.models.abe.mheads import MHeads

    return MHeads(backbone, **model_options(config))


def compile_with_optimizer(config, model):
    """Compiles with `config["optimizer"]` only: the model computes its loss itself."""
    options = dict(config.get("method_options", {}))
    if options:
        raise ValueError(f"ABE and M-heads take no method_options. Received: {sorted(options)}")
    model.compile(optimizer=build_optimizer(config))


ABE_SPEC = MethodSpec(
    name="abe",
    description="ABE-M: M attention masks on a shared trunk, shared embedding G, divergence loss",
    build=build_abe,
    compile=compile_with_optimizer,
)

MHEADS_SPEC = MethodSpec(
    name="mheads",
    description="M-heads: shared bottom layers, M separate copies of the top (ABE's baseline)",
    build=build_mheads,
    compile=compile_with_optimizer,
)
