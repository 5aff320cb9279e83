"""A minimal `.caffemodel` writer for the tests: the inverse of `convert.caffemodel`'s reader.

Writes a `NetParameter` with new-style `layer` (100: name 1, type 2, blobs 7) or V1 `layers`
(2: name 4, type 5, blobs 6) messages; each `BlobProto` gets `shape` (7) or the legacy
num/channels/height/width (1-4), and float32 `data` (5) packed or one fixed32 field per value.
The layer type and the net name are written too, so the reader must skip fields it ignores.
"""

import numpy as np

VARINT, LENGTH_DELIMITED, FIXED32 = 0, 2, 5


def _varint(value):
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _key(number, wire):
    return _varint(number << 3 | wire)


def _message(number, payload):
    return _key(number, LENGTH_DELIMITED) + _varint(len(payload)) + payload


def encode_blob(array, packed=True, legacy_shape=False):
    """One `BlobProto`; `legacy_shape` writes a 4-D shape left-padded with 1 (old Caffe)."""
    array = np.asarray(array, dtype="float32")
    if legacy_shape:
        dims = (1,) * (4 - array.ndim) + array.shape
        out = b"".join(_key(n, VARINT) + _varint(d) for n, d in zip((1, 2, 3, 4), dims))
    else:
        out = _message(7, _message(1, b"".join(_varint(d) for d in array.shape)))
    values = array.astype("<f4").reshape(-1)
    if packed:
        return out + _message(5, values.tobytes())
    return out + b"".join(_key(5, FIXED32) + value.tobytes() for value in values)


def encode_net(layers, v1=False, packed=True, legacy_shape=False):
    """A serialised `NetParameter` holding `{layer name: [arrays]}` in dict order."""
    net = _message(1, b"GoogleNet")
    for name, blobs in layers.items():
        body = _message(4 if v1 else 1, name.encode())
        body += _key(5, VARINT) + _varint(4) if v1 else _message(2, b"Convolution")
        for blob in blobs:
            body += _message(6 if v1 else 7, encode_blob(blob, packed, legacy_shape))
        net += _message(2 if v1 else 100, body)
    return net


def write_caffemodel(path, layers, **options):
    """Writes `encode_net(layers, **options)` to `path`; returns `path`."""
    with open(path, "wb") as handle:
        handle.write(encode_net(layers, **options))
    return path
