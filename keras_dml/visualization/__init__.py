"""Plots: attention maps (ABE), Grad-CAM per learner, compositor weights (DCML).

matplotlib and tf-keras-vis are imported when a function runs (extra `vis`).
"""

from keras_dml.visualization.attention import plot_attention
from keras_dml.visualization.compositor_weights import plot_compositor_weights
from keras_dml.visualization.gradcam import gradcam_maps

__all__ = ["gradcam_maps", "plot_attention", "plot_compositor_weights"]
