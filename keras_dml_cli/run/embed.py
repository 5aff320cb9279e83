"""`keras-dml embed MODEL --images DIR --store URI`: image files embedded on Apache Beam."""

from keras_dml.pipelines.embed import embed_images

__all__ = ["run_embed"]


def run_embed(args):
    """Runs `keras-dml embed`; prints the counts, where the rows went, and each bad file."""
    names = ("store", "output", "collection", "index", "runner", "batch_size", "strict_files")
    options = {name: getattr(args, name) for name in names}
    counts = embed_images(
        args.model, args.images, beam_args=args.beam_options, onnx_path=args.onnx, **options
    )
    places = [f"the collection {args.collection!r} of {args.store}"] if args.store else []
    places += [f"Parquet shards in {args.output}"] if args.output else []
    print(
        f"embedded {counts['embedded']} of {counts['files']} image files into "
        f"{' and '.join(places)} ({counts['written']} rows written, keyed by path)"
    )
    for name in counts["bad_file_names"]:
        print(f"skipped a bad file: {name}")
    return 0
