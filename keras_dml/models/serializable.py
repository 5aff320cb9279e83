"""Every registered model class a `.keras` file can name, without the training methods.

Loading a saved model needs these classes (and BIER's diversity layers) registered with Keras;
the training methods (`method.py`, callbacks) import evaluation and search, which loading does
not need.
"""

from keras_dml.layers.diversity import ActivationDiversity, AdversarialDiversity
from keras_dml.models.abe import ABE
from keras_dml.models.bier import BIER
from keras_dml.models.dcml import DCML
from keras_dml.models.divide_and_conquer import DivideAndConquer
from keras_dml.models.embedding_model import EmbeddingModel
from keras_dml.models.hierarchical_divide_and_conquer import HierarchicalDivideAndConquer
from keras_dml.models.mheads import MHeads

MODEL_CLASSES = (
    ABE,
    ActivationDiversity,
    AdversarialDiversity,
    BIER,
    DCML,
    DivideAndConquer,
    EmbeddingModel,
    HierarchicalDivideAndConquer,
    MHeads,
)
