"""What an export produced: `ExportReport`, and the error raised when parity fails."""

import json
from dataclasses import asdict, dataclass, field


class ExportParityError(AssertionError):
    """The exported artifact does not reproduce the Keras model's embeddings within tolerance."""


@dataclass
class ExportReport:
    """Summary of one export, returned by `export_saved_model` / `export_onnx`.

    Attributes:
        path: str. Where the artifact was written.
        format: str. `"saved_model"` or `"onnx"`.
        input_name: str. Name of the image input (`"images"`).
        output_name: str. Name of the embedding output (`"embedding"`).
        input_dtypes: list of str. Accepted image dtypes.
        image_shape: list of int. `[H, W, C]` of the input; the batch is dynamic.
        embedding_dim: int. `D`, the size of the output embedding.
        learner_dims: list of int or `None`. Per-learner slices of the embedding, when known.
        num_variables: int. Variables captured by the exported graph.
        num_model_weights: int. All weights of the Keras model.
        excluded_weights: list of str. Model weights the graph does not read.
        max_abs_diff: dict. Input dtype -> max |exported - Keras|; empty when not checked.
        opset: int or `None`. ONNX opset (ONNX only).
        source_dtype_policy: str or `None`. The 16-bit policy export rebuilt in float32.
        max_abs_diff_source: dict. Input dtype -> max |exported - 16-bit Keras model|.
    """

    path: str
    format: str
    input_name: str
    output_name: str
    input_dtypes: list
    image_shape: list
    embedding_dim: int
    learner_dims: list = None
    num_variables: int = 0
    num_model_weights: int = 0
    excluded_weights: list = field(default_factory=list)
    max_abs_diff: dict = field(default_factory=dict)
    opset: int = None
    source_dtype_policy: str = None
    max_abs_diff_source: dict = field(default_factory=dict)

    def to_dict(self):
        """The report as a JSON-serialisable dict."""
        return asdict(self)

    def to_json(self, indent=2):
        """The report as a JSON string."""
        return json.dumps(self.to_dict(), indent=indent)

    def __str__(self):
        height, width, channels = self.image_shape
        lines = [
            f"Exported {self.format} to {self.path}",
            f"  input  '{self.input_name}': [N, {height}, {width}, {channels}] "
            f"{' or '.join(self.input_dtypes)}, raw pixels in [0, 255]",
            f"  output '{self.output_name}': [N, {self.embedding_dim}] float32"
            + (f" (learners {self.learner_dims})" if self.learner_dims else ""),
            f"  variables: {self.num_variables} of the model's {self.num_model_weights} weights",
        ]
        if self.excluded_weights:
            lines.append(f"  left out (not used by call): {', '.join(self.excluded_weights)}")
        if self.opset is not None:
            lines.append(f"  opset: {self.opset}")
        if self.source_dtype_policy is not None:
            lines.append(
                f"  precision: trained under {self.source_dtype_policy}, exported in float32 "
                "(rebuilt with float32 dtype policies, same weights)"
            )
        for dtype, diff in self.max_abs_diff.items():
            lines.append(f"  parity ({dtype} input): max |exported - keras| = {diff:.3g}")
        for dtype, diff in self.max_abs_diff_source.items():
            lines.append(
                f"  vs the {self.source_dtype_policy} model ({dtype} input): "
                f"max |exported - keras| = {diff:.3g}"
            )
        return "\n".join(lines)


def check_parity(actual, expected, atol, what):
    """Returns max |actual - expected|; raises `ExportParityError` (naming `what`) above `atol`."""
    if actual.shape != expected.shape:
        raise ExportParityError(
            f"{what}: output shape {actual.shape} differs from the Keras model's {expected.shape}."
        )
    diff = float(abs(actual - expected).max()) if actual.size else 0.0
    if not diff <= atol:
        raise ExportParityError(
            f"{what}: max |exported - keras| = {diff:.3g} exceeds atol={atol:g} (largest |keras| "
            f"value: {float(abs(expected).max()):.3g}). The artifact is kept for inspection. "
            "Check for layers whose inference behaviour depends on Python state, or raise `atol` "
            "if the outputs are not normalised or a converter reorders float operations (large "
            "backbones)."
        )
    return diff
