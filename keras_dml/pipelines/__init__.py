"""Batch embedding on Apache Beam (`keras-dml[beam]`): image files into a vector store or Parquet.

`keras_dml.pipelines.embed` holds `EmbedImages` and `embed_images`; importing this package
imports no Apache Beam.
"""
