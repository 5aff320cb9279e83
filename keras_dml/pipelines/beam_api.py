"""Apache Beam's classes when `keras-dml[beam]` is installed, else stand-ins that say how to get it.

`import keras_dml` never imports this module: `keras_dml.pipelines` loads it on first use.
"""

from keras_dml.utils import optional_import

FEATURE = "batch embedding on Apache Beam"


def require_beam():
    """`apache_beam`, or a one-line `MissingDependencyError` naming `keras-dml[beam]`."""
    return optional_import("apache_beam", feature=FEATURE)


try:
    import apache_beam as beam
    from apache_beam.io import fileio
    from apache_beam.io.filesystems import FileSystems
    from apache_beam.metrics import Metrics
    from apache_beam.metrics.metric import MetricsFilter
    from apache_beam.ml.inference.base import (
        KeyedModelHandler,
        ModelHandler,
        PredictionResult,
        RunInference,
    )
    from apache_beam.options.pipeline_options import PipelineOptions

    DoFn, PTransform = beam.DoFn, beam.PTransform
except ImportError:  # the `beam` extra is missing: building any class below says so in one line
    beam = fileio = FileSystems = Metrics = MetricsFilter = PipelineOptions = None
    KeyedModelHandler = PredictionResult = RunInference = None

    class _NeedsBeam:
        def __init__(self, *args, **kwargs):
            require_beam()

    DoFn = PTransform = ModelHandler = _NeedsBeam
