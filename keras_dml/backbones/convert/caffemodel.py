"""Reading the weights of a Caffe `.caffemodel` from the protobuf wire format, without Caffe."""

import os

import numpy as np

# Field numbers from caffe.proto; every other field is skipped.
NET_LAYER, NET_V1_LAYERS = 100, 2
LAYER_NAME, LAYER_BLOBS = 1, 7
V1_NAME, V1_BLOBS = 4, 6
BLOB_SHAPE, BLOB_DATA, BLOB_DOUBLE_DATA = 7, 5, 8
BLOB_LEGACY_DIMS = (1, 2, 3, 4)  # num, channels, height, width
SHAPE_DIM = 1
# Protobuf wire types.
VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


class CaffemodelError(ValueError):
    """The bytes are not a `NetParameter` message this reader understands."""


def _varint(buffer, position):
    """Decodes a base-128 varint at `position`; returns `(value, next position)`."""
    value, shift = 0, 0
    while True:
        if position >= len(buffer):
            raise CaffemodelError("truncated varint")
        byte = buffer[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7
        if shift > 63:
            raise CaffemodelError("varint longer than 10 bytes")


def fields(buffer):
    r"""Yields `(field number, wire type, value)` for every field of a serialised message.

    Raises:
        CaffemodelError: a truncated message or a wire type protobuf 2 does not write.
    """
    buffer = memoryview(buffer)
    position = 0
    while position < len(buffer):
        key, position = _varint(buffer, position)
        number, wire = key >> 3, key & 7
        if wire == VARINT:
            value, position = _varint(buffer, position)
        elif wire in (FIXED64, FIXED32, LENGTH_DELIMITED):
            if wire == LENGTH_DELIMITED:
                size, position = _varint(buffer, position)
            else:
                size = 8 if wire == FIXED64 else 4
            if position + size > len(buffer):
                raise CaffemodelError(f"field {number} runs past the end of its message")
            value = buffer[position : position + size]
            position += size
        else:
            raise CaffemodelError(f"field {number} has wire type {wire} (groups are not used)")
        yield number, wire, value


def _packed_varints(payload):
    values, position = [], 0
    while position < len(payload):
        value, position = _varint(payload, position)
        values.append(value)
    return values


def _repeated_numbers(chunks, dtype):
    """Joins the packed payloads and single values of one repeated fixed-width field."""
    raw = b"".join(bytes(chunk) for chunk in chunks)
    if len(raw) % np.dtype(dtype).itemsize:
        raise CaffemodelError(f"{dtype} blob data of {len(raw)} bytes")
    return np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).astype(dtype)


def read_blob(buffer):
    """Decodes one serialised `BlobProto` into a float32 array of its shape.

    Raises:
        CaffemodelError: the number of values does not match the shape.
    """
    dims, legacy = None, {}
    floats, doubles = [], []
    for number, wire, value in fields(buffer):
        if number == BLOB_SHAPE and wire == LENGTH_DELIMITED:
            dims = []
            for dim_number, dim_wire, dim in fields(value):
                if dim_number == SHAPE_DIM:
                    dims += _packed_varints(dim) if dim_wire == LENGTH_DELIMITED else [dim]
        elif number == BLOB_DATA and wire in (LENGTH_DELIMITED, FIXED32):
            floats.append(value)
        elif number == BLOB_DOUBLE_DATA and wire in (LENGTH_DELIMITED, FIXED64):
            doubles.append(value)
        elif number in BLOB_LEGACY_DIMS and wire == VARINT:
            legacy[number] = value
    data = _repeated_numbers(floats, "float32")
    if not data.size and doubles:
        data = _repeated_numbers(doubles, "float64").astype("float32")
    if dims is None:
        dims = [legacy.get(n, 0) for n in BLOB_LEGACY_DIMS] if legacy else [data.size]
    if int(np.prod(dims)) != data.size:
        raise CaffemodelError(f"a blob of shape {tuple(dims)} holds {data.size} values")
    return data.reshape(dims)


def _read_layer(buffer, name_field, blobs_field):
    name, blobs = None, []
    for number, wire, value in fields(buffer):
        if wire != LENGTH_DELIMITED:
            continue
        if number == name_field:
            try:
                name = bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                raise CaffemodelError("a layer name is not UTF-8 text") from None
        elif number == blobs_field:
            blobs.append(read_blob(value))
    return name, blobs


def parse_net(data):
    """`{layer name: [blobs]}` of a serialised `NetParameter` (see `read_caffemodel`)."""
    layers = {}
    for number, wire, value in fields(data):
        if wire != LENGTH_DELIMITED or number not in (NET_LAYER, NET_V1_LAYERS):
            continue
        if number == NET_LAYER:
            name, blobs = _read_layer(value, LAYER_NAME, LAYER_BLOBS)
        else:
            name, blobs = _read_layer(value, V1_NAME, V1_BLOBS)
        if name is None:
            raise CaffemodelError(
                "a layer has no name (a V0 model?); upgrade it with Caffe's "
                "upgrade_net_proto_binary"
            )
        if name in layers and (blobs or layers[name]):
            raise CaffemodelError(f"two layers with weights are named {name!r}")
        layers[name] = layers.get(name) or blobs
    if not layers:
        raise CaffemodelError("it holds no layers")
    return layers


def read_caffemodel(source):
    """Reads the weights of a Caffe `.caffemodel` file (or its bytes), `layer` or V1 `layers`.

    Returns:
        dict. Caffe layer name (`"conv1/7x7_s2"`) -> its blobs as float32 arrays, in file order;
        `[]` for layers without weights.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: one line when the bytes are not a `.caffemodel` this reader decodes.

    References:
        Caffe's `caffe.proto` (NetParameter, LayerParameter, V1LayerParameter, BlobProto);
        Protocol Buffers encoding, https://protobuf.dev/programming-guides/encoding/.
    """
    label = "the given bytes"
    if isinstance(source, (str, os.PathLike)):
        label = os.fspath(source)
        if not os.path.exists(label):
            raise FileNotFoundError(f"Caffe model file not found: {label!r}.")
        with open(label, "rb") as handle:
            source = handle.read()
    try:
        return parse_net(source)
    except CaffemodelError as error:
        raise CaffemodelError(
            f"{label!r} is not a Caffe .caffemodel (NetParameter) file: {error}."
        ) from None
