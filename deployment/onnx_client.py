"""Stand-alone ONNX Runtime client for a keras-dml embedding model: embed a folder, query it.

Needs only onnxruntime, numpy and Pillow; it never imports keras_dml or TensorFlow, so it runs on
a serving machine. The search is keras-dml's exact NumPy algorithm, the package folder
`keras_dml/search/exact_topk/` (NumPy only), loaded by path from the checkout or installed package
next to it without importing keras_dml; copy that folder next to this one on a machine without
keras-dml. Without it, a plain NumPy argsort gives the same neighbours (ties by index) using more
memory.

The model (from `keras-dml export ... --format onnx`) takes `images` [batch, H, W, 3] raw RGB
pixels in [0, 255] (float32 or uint8) and returns `embedding` [batch, D] made of L2-normalised
learner embeddings, so the dot product is the similarity. Inputs follow keras-dml's input
contract, `keras_dml/serving/input_contract.py` (NumPy only, loaded by path like the search
package; copy that file next to this one on a machine without keras-dml): image files are
decoded to RGB and resized to the model's input size (read from the ONNX input shape); arrays
must already have that size and 3 channels; NaN / Inf or out-of-range pixels are refused,
[0, 1]-scaled floats warned about, and a NaN embedding is never returned.

Examples:
    python deployment/onnx_client.py embed --model model.onnx --images photos/ --output emb.npy
    python deployment/onnx_client.py query --model model.onnx --index emb.npy --image q.jpg -k 5
    python deployment/onnx_client.py query --model model.onnx --index gallery_index/ --image q.jpg

`embed` writes `emb.npy` (float32 [N, D]) and `emb.paths.txt` (one image path per row). `query`
also reads an exact index folder saved by `keras_dml.search` (`index.save(DIR)` or
`keras-dml search ... --save-index DIR`): its `embeddings.npy`, `ids.json` and class names.
"""

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff")


class ClientError(ValueError):
    """A problem with the model, an image or an index, explained for the user."""


class EmbeddingClient:
    """Runs an exported keras-dml ONNX model with ONNX Runtime.

    Args:
        model_path: str. The `.onnx` file.
        num_threads: int. Intra-op threads; defaults to `os.cpu_count()` (all cores).
        spinning: bool. Let idle worker threads busy-wait: lower latency on a dedicated machine,
            slower on a shared one (see benchmarks/speed/inference.py). Defaults to `False`.

    Examples:
        >>> client = EmbeddingClient("model.onnx")  # doctest: +SKIP
        >>> client.embed_files(["a.jpg", "b.png"]).shape  # doctest: +SKIP
        (2, 128)
    """

    def __init__(self, model_path, num_threads=None, spinning=False):
        import onnxruntime as ort

        if not os.path.isfile(model_path):
            raise ClientError(f"ONNX model not found: {model_path}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = int(num_threads or os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", str(int(spinning)))
        self.session = ort.InferenceSession(
            model_path, sess_options=options, providers=["CPUExecutionProvider"]
        )
        inputs, outputs = self.session.get_inputs(), self.session.get_outputs()
        if len(inputs) != 1 or len(outputs) != 1:
            raise ClientError(
                f"{model_path} is not a keras-dml embedding model: expected one input and one "
                f"output, found {[i.name for i in inputs]} -> {[o.name for o in outputs]}."
            )
        self.input_name, self.output_name = inputs[0].name, outputs[0].name
        shape = inputs[0].shape
        if len(shape) != 4 or not all(isinstance(d, int) for d in shape[1:]):
            raise ClientError(
                f"{model_path}: expected an input [batch, H, W, C] with fixed H, W, C, found "
                f"{shape}. Re-export with `keras-dml export --image-size H W`."
            )
        self.height, self.width, self.channels = shape[1:]
        self.input_dtype = {"tensor(uint8)": np.uint8, "tensor(float)": np.float32}.get(
            inputs[0].type
        )
        if self.input_dtype is None:
            raise ClientError(f"{model_path}: unsupported input type {inputs[0].type}.")
        self.contract = load_input_contract()

    def prepare(self, image, contract=None):
        """Turns a PIL image or an array into one `[H, W, C]` input for the model.

        A PIL image is decoded by the input contract: grayscale becomes RGB, RGBA and LA lose
        their alpha channel (each with a note on stderr), and it is resized to the model's
        size. An array must already be `[H, W, 3]` at the model's size (arrays are never
        resized). Both are then checked: NaN / Inf or out-of-range pixels and non-numeric
        dtypes are refused, [0, 1]-scaled floats warned about.

        Args:
            image: `PIL.Image.Image`, or numpy array `[H, W, 3]` of uint8 or of floats in
                [0, 255].
            contract: the call's `ImageContract` (warns once per call), or None for a new one.

        Returns:
            numpy array `[H, W, C]` in the model's input dtype.
        """
        from PIL import Image

        contract = contract or self.new_contract()
        if isinstance(image, Image.Image):
            if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
                _note(f"image has an alpha channel ({image.mode}); alpha dropped")
            elif image.mode in ("L", "1", "I", "I;16", "F"):
                _note(f"grayscale image ({image.mode}) converted to RGB")
            image = self.contract.decode_image(image, (self.height, self.width))
        elif not isinstance(image, np.ndarray):
            raise ClientError(f"Expected a PIL image or a numpy array, got {type(image).__name__}.")
        elif image.ndim != 3:
            raise ClientError(
                f"An image array must be [H, W, C] = [{self.height}, {self.width}, "
                f"{self.channels}]; got shape {image.shape}."
            )
        return self.checked(image[None], contract)[0]

    def new_contract(self):
        """The input contract of this model, for one call (its [0, 1] warning shows once)."""
        return self.contract.ImageContract((self.height, self.width, self.channels))

    def checked(self, batch, contract):
        """`batch` `[N, H, W, C]` checked by `contract`, in the model's input dtype."""
        try:
            batch = contract.check(batch)
        except self.contract.InputContractError as error:
            raise ClientError(str(error)) from None
        if self.input_dtype == np.uint8 and batch.dtype != np.uint8:
            batch = np.rint(batch)  # the contract checked the range [0, 255]
        return batch.astype(self.input_dtype, copy=False)

    def embed(self, images):
        """Embeds a batch: a list of PIL images / arrays, or one array `[N, H, W, C]`.

        Returns:
            float32 array `[N, D]`.

        Raises:
            ClientError: the images break the input contract, or the model returned a NaN /
                Inf embedding.
        """
        contract = self.new_contract()
        if isinstance(images, np.ndarray):
            if images.ndim != 4:
                raise ClientError(
                    f"A batch array must be [N, H, W, C]; got shape {images.shape}. Pass a "
                    "list for single images."
                )
            batch = self.checked(images, contract)
        elif len(images) == 0:  # an empty batch gives `[0, D]`, as on every keras-dml path
            batch = np.zeros((0, self.height, self.width, self.channels), self.input_dtype)
        else:
            batch = np.stack([self.prepare(image, contract) for image in images])
        (embeddings,) = self.session.run([self.output_name], {self.input_name: batch})
        try:
            self.contract.check_embeddings(embeddings)
        except self.contract.InputContractError as error:
            raise ClientError(str(error)) from None
        return embeddings.astype(np.float32)

    def embed_files(self, paths, batch_size=32):
        """Embeds image files in batches; returns float32 `[len(paths), D]`."""
        from PIL import Image

        chunks = []
        for start in range(0, len(paths), batch_size):
            batch = []
            for path in paths[start : start + batch_size]:
                try:
                    with Image.open(path) as image:
                        image.load()
                        batch.append(image.copy())
                except OSError as error:
                    raise ClientError(f"Cannot read image {path}: {error}") from error
            chunks.append(self.embed(batch))
        return np.concatenate(chunks) if chunks else np.zeros((0, 0), np.float32)


def _note(message):
    print(f"note: {message}", file=sys.stderr)


def list_images(folder):
    """Sorted image files under `folder` (recursive)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ClientError(f"Image folder not found: {folder}")
    paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
    if not paths:
        raise ClientError(f"No images ({', '.join(IMAGE_SUFFIXES)}) found under {folder}")
    return [str(p) for p in paths]


def paths_file(index_path):
    """The text file listing the image of each index row, next to the `.npy` index."""
    return str(Path(index_path).with_suffix("")) + ".paths.txt"


SHARED_SEARCH = "exact_topk"
INPUT_CONTRACT = "input_contract.py"


def _shared_paths(subpackage, name):
    """Where a NumPy-only part of keras-dml (`keras_dml/<subpackage>/<name>`) may be: next to
    this file, in the checkout, in the installed package (found without importing keras_dml)."""
    here = Path(__file__).resolve().parent
    candidates = [here / name, here.parent / "keras_dml" / subpackage / name]
    try:
        spec = importlib.util.find_spec("keras_dml")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        candidates.append(Path(spec.origin).parent / subpackage / name)
    return candidates


def _shared_search_paths():
    """Where keras-dml's NumPy-only search package may be (see `_shared_paths`)."""
    return _shared_paths("search", SHARED_SEARCH)


def load_input_contract():
    """keras-dml's input contract (`keras_dml/serving/input_contract.py`, NumPy only), loaded by
    path without importing keras_dml; the client refuses to run without it."""
    name = "_keras_dml_input_contract"
    if name in sys.modules:
        return sys.modules[name]
    for path in _shared_paths("serving", INPUT_CONTRACT):
        if path.is_file():
            return _load_registered(name, importlib.util.spec_from_file_location(name, path))
    raise ClientError(
        f"keras-dml's input contract ({INPUT_CONTRACT}) was not found; copy "
        "keras_dml/serving/input_contract.py next to onnx_client.py."
    )


def _load_registered(name, spec):
    """Runs the module of `spec` registered as `name` (kept only if it runs)."""
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_shared_search():
    """keras-dml's exact NumPy search package, loaded by path (no keras_dml import), or None.

    The package's modules import each other relatively, so it is registered under its own name
    before it runs.
    """
    name = "_keras_dml_exact_topk"
    if name in sys.modules:
        return sys.modules[name]
    for path in _shared_search_paths():
        if (path / "__init__.py").is_file():
            spec = importlib.util.spec_from_file_location(
                name, path / "__init__.py", submodule_search_locations=[str(path)]
            )
            return _load_registered(name, spec)
    return None


def nearest(index, queries, k):
    """Top-k rows of `index` by inner product for each query: (scores, ids), each [Q, k].

    Ordered by decreasing score, then row. Uses keras-dml's chunked exact search when its
    module is found (bounded memory), else one NumPy block and a stable argsort.
    """
    k = min(int(k), len(index))
    queries = np.asarray(queries, dtype=np.float32)
    shared = load_shared_search()
    if shared is not None:
        ids, scores = shared.exact_search(queries, index, k)
        return scores, ids
    scores = queries @ np.asarray(index, dtype=np.float32).T
    ids = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, ids, axis=1), ids


def read_index(path):
    """`(embeddings, names)` from a `.npy` index (+ `.paths.txt`) or a keras-dml index folder."""
    path = Path(path)
    if path.is_dir():
        meta_path = path / "index.json"
        if not meta_path.is_file():
            raise ClientError(f"{path} is not a keras-dml index folder (no index.json).")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        embeddings = np.load(path / "embeddings.npy", mmap_mode="r")
        count = len(embeddings)
        ids = (
            json.loads((path / "ids.json").read_text(encoding="utf-8"))
            if (path / "ids.json").is_file()
            else [f"row {i}" for i in range(count)]
        )
        if (path / "labels.npy").is_file():
            labels = np.load(path / "labels.npy")
            classes = meta.get("class_names") or []
            ids = [
                f"{classes[label] if label < len(classes) else label}\t{name}"
                for label, name in zip(labels.tolist(), ids)
            ]
        return embeddings, [str(i) for i in ids]
    if not path.is_file():
        raise ClientError(f"Index not found: {path}. Build it with the `embed` command.")
    embeddings = np.load(path)
    names_path = paths_file(path)
    names = (
        Path(names_path).read_text(encoding="utf-8").split("\n")
        if os.path.isfile(names_path)
        else [f"row {i}" for i in range(len(embeddings))]
    )
    return embeddings, names


def run_embed(args):
    client = EmbeddingClient(args.model, num_threads=args.threads, spinning=args.spin)
    paths = list_images(args.images)
    embeddings = client.embed_files(paths, batch_size=args.batch_size)
    output = args.output if args.output.endswith(".npy") else args.output + ".npy"
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    np.save(output, embeddings)
    Path(paths_file(output)).write_text("\n".join(paths) + "\n", encoding="utf-8")
    print(f"embedded {len(paths)} images -> {output} {embeddings.shape}, {paths_file(output)}")
    return 0


def run_query(args):
    index, names = read_index(args.index)
    client = EmbeddingClient(args.model, num_threads=args.threads, spinning=args.spin)
    query = client.embed_files([args.image])
    if index.ndim != 2 or index.shape[1] != query.shape[1]:
        raise ClientError(
            f"Index {args.index} has shape {index.shape} but the model embeds to "
            f"{query.shape[1]} dimensions; rebuild it with this model."
        )
    scores, ids = nearest(index, query, args.k)
    for rank, (score, row) in enumerate(zip(scores[0], ids[0]), start=1):
        print(f"{rank}\t{score:.4f}\t{names[row]}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    embed = commands.add_parser("embed", help="embed a folder of images into a .npy index")
    embed.add_argument("--model", required=True, help="exported .onnx model")
    embed.add_argument("--images", required=True, help="folder of images (searched recursively)")
    embed.add_argument("--output", required=True, help="output .npy file")
    embed.add_argument("--batch-size", type=int, default=32, help="images per run (default 32)")
    query = commands.add_parser("query", help="nearest neighbours of one image in an index")
    query.add_argument("--model", required=True, help="exported .onnx model")
    query.add_argument(
        "--index", required=True, help=".npy index written by `embed`, or a keras-dml index folder"
    )
    query.add_argument("--image", required=True, help="query image file")
    query.add_argument("-k", type=int, default=5, help="neighbours to print (default 5)")
    for sub in (embed, query):
        sub.add_argument("--threads", type=int, help="intra-op threads (default: all cores)")
        sub.add_argument("--spin", action="store_true", help="busy-wait threads (idle machines)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return run_embed(args) if args.command == "embed" else run_query(args)
    except ClientError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
