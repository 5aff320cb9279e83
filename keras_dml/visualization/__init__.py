"""Pictures of embeddings and runs, each a function returning a `matplotlib.figure.Figure`."""

from keras_dml.visualization._common import save_figure
from keras_dml.visualization.attention import plot_attention
from keras_dml.visualization.compositor_weights import (
    compositor_weight_matrix,
    plot_compositor_weights,
)
from keras_dml.visualization.gradcam import gradcam_maps
from keras_dml.visualization.learner_diagnostics import plot_learner_diagnostics
from keras_dml.visualization.learner_grids import plot_learner_retrieval_grids
from keras_dml.visualization.neighbors import nearest_neighbors
from keras_dml.visualization.projection import plot_projection, project_embeddings
from keras_dml.visualization.report import write_report
from keras_dml.visualization.retrieval_grid import plot_retrieval_grid, select_queries
from keras_dml.visualization.training_curves import load_history, plot_training_curves

__all__ = [
    "compositor_weight_matrix",
    "gradcam_maps",
    "load_history",
    "nearest_neighbors",
    "plot_attention",
    "plot_compositor_weights",
    "plot_learner_diagnostics",
    "plot_learner_retrieval_grids",
    "plot_projection",
    "plot_retrieval_grid",
    "plot_training_curves",
    "project_embeddings",
    "save_figure",
    "select_queries",
    "write_report",
]
