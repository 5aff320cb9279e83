"""`weights="imagenet"` for backbones whose ImageNet weights are converted from PyTorch or Caffe."""

import os
import shutil
import urllib.request
from pathlib import Path
from urllib.parse import quote, urlparse

from keras_dml.backbones.conversions import CONVERSIONS, conversion_for_options
from keras_dml.backbones.expected_source import check_converted_source
from keras_dml.backbones.weights import WeightsUnavailableError
from keras_dml.utils.keras_home import keras_dml_home
from keras_dml.utils.sha256 import sha256_file

WEIGHTS_ENV = "KERAS_DML_BACKBONE_WEIGHTS"
SHA_SUFFIX = ".sha256"


def imagenet_file_name(name, options):
    """File name of the converted ImageNet weights of a backbone variant."""
    variant = options.get("variant")
    return f"{name}_{variant}_imagenet.weights.h5" if variant else f"{name}_imagenet.weights.h5"


def backbone_cache_dir():
    """`<KERAS_HOME or ~/.keras>/keras_dml/backbones` (not necessarily existing)."""
    return keras_dml_home() / "backbones"


def read_sha256(path):
    """The hex digest in a `sha256sum`-format file (`<hex>  <name>`), lowercased."""
    return Path(path).read_text().split()[0].strip().lower()


def write_sha256(path):
    """Writes `<path>.sha256` in `sha256sum` format and returns the digest."""
    digest = sha256_file(path)
    Path(f"{path}{SHA_SUFFIX}").write_text(f"{digest}  {os.path.basename(path)}\n")
    return digest


def verify_sha256(path, delete=False):
    """Checks `path` against `<path>.sha256`; returns `path` or raises a one-line error."""
    sha_path = f"{path}{SHA_SUFFIX}"
    if not os.path.exists(sha_path):
        raise WeightsUnavailableError(
            f"Found {path} but no {sha_path} to check it against: convert it again with "
            f"`keras-dml backbones convert` (which writes both) or write it with `sha256sum`."
        )
    expected, actual = read_sha256(sha_path), sha256_file(path)
    if expected != actual:
        if delete:
            os.remove(path)
        raise WeightsUnavailableError(
            f"The sha256 of {path} is {actual}, not {expected} as {sha_path} says: the file is "
            "corrupted or was changed after conversion; convert it again."
        )
    return str(path)


def _fetch(url, target, timeout=60.0):
    """Copies `url` (http, https or file) to `target` through `<target>.part`."""
    part = f"{target}.part"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(part, "wb") as out:
            shutil.copyfileobj(response, out)
    except OSError as error:
        raise WeightsUnavailableError(
            f"Could not copy {url} from the mirror {WEIGHTS_ENV} names ({error}); put the file "
            "there or unset the variable to use the Keras cache."
        ) from error
    os.replace(part, target)


def _from_mirror(mirror, filename):
    """Copies `<mirror>/<filename>` and its `.sha256` into the cache; returns the cached path."""
    cache = backbone_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / filename
    url = f"{mirror.rstrip('/')}/{quote(filename)}"
    _fetch(f"{url}{SHA_SUFFIX}", f"{target}{SHA_SUFFIX}")
    _fetch(url, target)
    return verify_sha256(target, delete=True)


def _convertible():
    """`"googlenet variant='caffe', ..., bn_inception"`: the backbones with a conversion."""
    return ", ".join(
        " ".join([c.backbone, *(f"{k}={v!r}" for k, v in c.options.items())]) for c in CONVERSIONS
    )


def convert_command(name, options, source_file=None):
    """The `keras-dml backbones convert` line that writes the file `find_imagenet_weights` wants.

    Returns `None` when nothing converts into this backbone variant; `source_file` names the
    downloaded file.

    Examples:
    >>> convert_command("resnet50", {"variant": "v1.5"}, "r.pth").split(" --output")[0]
    'keras-dml backbones convert --backbone resnet50 --from torchvision --state-dict r.pth'
    """
    conversion = conversion_for_options(name, options)
    if conversion is None:
        return None
    return (
        f"keras-dml backbones convert --backbone {name} --from {conversion.source} "
        f"--state-dict {source_file or '<downloaded file>'} "
        f"--output {backbone_cache_dir() / imagenet_file_name(name, options)}"
    )


def _locate(name, options):
    """`(verified path or None, the places looked in)`."""
    filename = imagenet_file_name(name, options)
    cached = backbone_cache_dir() / filename
    configured = os.environ.get(WEIGHTS_ENV)
    looked = []
    if configured:
        if urlparse(configured).scheme in ("http", "https", "file"):
            if cached.exists() and Path(f"{cached}{SHA_SUFFIX}").exists():
                return verify_sha256(cached, delete=True), looked
            return _from_mirror(configured, filename), looked
        candidate = Path(configured).expanduser() / filename
        if candidate.exists():
            return verify_sha256(candidate), looked
        looked.append(str(candidate))
    if cached.exists():
        return verify_sha256(cached), looked
    looked.append(str(cached))
    return None, looked


def find_imagenet_weights(name, options, expected=None):
    """Path of the verified converted ImageNet weights of `name` built with `options`.

    Raises:
        WeightsUnavailableError: one line saying where it looked and the `keras-dml backbones
            convert` command, or that the sha256 or the source file (`expected`) does not match.
    """
    conversion = conversion_for_options(name, options)
    command = convert_command(name, options, expected.file if expected else None)
    path, looked = _locate(name, options)
    if path is not None:
        if expected is None:
            return path
        return check_converted_source(path, expected, command)
    if conversion is None:
        variant = options.get("variant")
        raise WeightsUnavailableError(
            f"No ImageNet weights for backbone {name!r} variant {variant!r}: keras-dml converts "
            f"none for it (looked in {', '.join(looked)}); convertible: {_convertible()}."
        )
    wanted = conversion.download
    if expected is not None:
        wanted = f"{conversion.download.split(' ')[0]} ({expected.describe_digests()})"
    raise WeightsUnavailableError(
        f"No converted ImageNet weights for backbone {name!r} (looked in "
        f"{', '.join(looked)}): download {wanted} and run `{command}`."
    )
