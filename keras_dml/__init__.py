"""keras-dml: ensemble deep metric learning for Keras 3 on TensorFlow, JAX and PyTorch.

Importing the package registers every built-in (methods, losses, miners, backbones, datasets,
re-rankers) and every serialisable class with Keras, so `keras.saving.load_model` reads any
keras-dml `.keras` file after `import keras_dml`.
"""

from keras_dml import (
    backbones,
    data,
    demo,
    evaluation,
    export,
    layers,
    losses,
    methods,
    miners,
    models,
    optimizers,
    pairs,
    pipelines,
    search,
    serving,
    stores,
    training,
    utils,
    visualization,
    zoo,
)
from keras_dml.utils.version import __version__

__all__ = [
    "__version__",
    "backbones",
    "data",
    "demo",
    "evaluation",
    "export",
    "layers",
    "losses",
    "methods",
    "miners",
    "models",
    "optimizers",
    "pairs",
    "pipelines",
    "search",
    "serving",
    "stores",
    "training",
    "utils",
    "visualization",
    "zoo",
]
