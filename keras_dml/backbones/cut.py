"""`cut`: the sub-model of a functional model between two named layers (split points)."""

import keras

from keras_dml.backbones import registry


def _model_nodes(model):
    nodes_by_depth = getattr(model, "_nodes_by_depth", None)
    if nodes_by_depth is None:
        raise ValueError(
            "`cut` needs a functional model (built from `keras.Input` tensors), such as the "
            f"models of `keras_dml.backbones.get`. Received: {type(model).__name__} "
            f"{getattr(model, 'name', '')!r}"
        )
    return [node for nodes in nodes_by_depth.values() for node in nodes]


def _resolve_layer_name(model, name):
    """A layer name, or a split-point name of the backbone the model is named after."""
    names = {layer.name for layer in model.layers}
    if name in names:
        return name
    try:
        points = registry.split_points(model.name)
    except ValueError:
        points = {}
    if name in points and points[name] in names:
        return points[name]
    hint = f" Split points of {model.name!r}: {sorted(points)}." if points else ""
    raise ValueError(
        f"Model {model.name!r} has no layer or split point named {name!r}.{hint} "
        "Layer names are listed by `[layer.name for layer in model.layers]`."
    )


def _output_of(model, nodes, name):
    layer = model.get_layer(_resolve_layer_name(model, name))
    owned = [node for node in nodes if node.operation is layer]
    if len(owned) != 1 or len(owned[0].outputs) != 1:
        raise ValueError(
            f"Layer {layer.name!r} must be called once in model {model.name!r} and return one "
            f"tensor to serve as a cut point. It is called {len(owned)} time(s) there."
        )
    return owned[0].outputs[0]


def replay(end_tensor, values, start=None, end=None, model=None, wrap=None, operation_for=None):
    """Calls again every operation between known tensors and `end_tensor` on their new values.

    Args:
        end_tensor: KerasTensor. The output to reach.
        values: dict. `id(old tensor) -> new tensor` for the known tensors; filled in place.
        start, end, model: what the error message names. Defaults to `None`.
        wrap: callable `(old tensor, new tensor) -> tensor` or `None`. Replaces each new output
            (e.g. to insert a named layer after it). Defaults to `None`.
        operation_for: callable `(operation) -> callable` or `None`. What is called in place of
            each operation (e.g. a serialisable wrapper of it). Defaults to `None`.

    Returns:
        `values`, with every tensor on the way to `end_tensor`.

    Raises:
        ValueError: `end_tensor` needs an input that `values` does not hold.
    """
    stack = [end_tensor]
    while stack:
        tensor = stack[-1]
        if id(tensor) in values:
            stack.pop()
            continue
        operation, node_index, _ = tensor._keras_history
        node = operation._inbound_nodes[node_index]
        if node.is_input:
            raise ValueError(
                f"`end`={end!r} is not computed from `start`={start!r} alone in model "
                f"{getattr(model, 'name', None)!r}: the segment also needs the model input "
                f"{tensor.name!r}. Pick a `start` upstream of `end` that every path to `end` goes "
                "through."
            )
        pending = [t for t in node.arguments.keras_tensors if id(t) not in values]
        if pending:
            stack.extend(pending)
            continue
        args, kwargs = node.arguments.fill_in(values)
        call = operation if operation_for is None else operation_for(operation)
        outputs = keras.tree.flatten(call(*args, **kwargs))
        for old, new in zip(node.outputs, outputs):
            values[id(old)] = new if wrap is None else wrap(old, new)
        stack.pop()
    return values


def cut(model, start=None, end=None, name=None):
    """Sub-model of a functional model from the output of `start` to the output of `end`.

    The sub-model shares its layers and weights with `model`.

    Args:
        model: functional `keras.Model`, e.g. from `keras_dml.backbones.get`.
        start: str or None. Layer or split-point name whose output becomes the input
            (exclusive); `None`: the model input. Defaults to `None`.
        end: str or None. Layer or split-point name whose output is the output (inclusive);
            `None`: the model output. Defaults to `None`.
        name: str. Name of the sub-model. Defaults to `f"{model.name}_{start}_to_{end}"`.

    Returns:
        Functional `keras.Model` with one input `[N, *start_shape]` and one output.

    Raises:
        ValueError: an unknown name, `end` not downstream of `start`, a segment needing another
            input, or a `None` end on a model with several inputs or outputs.

    Examples:
    >>> import keras_dml
    >>> net = keras_dml.backbones.get("googlenet", input_shape=(64, 64, 3))
    >>> S = cut(net, end="pool3")
    >>> C = cut(net, start="pool3", end="inception_4e")
    >>> G = cut(net, start="inception_4e")

    References:
        Kim et al., "Attention-based Ensemble for Deep Metric Learning", ECCV 2018 (Sec. 4:
        S = input..pool3 after inception_3b; C = inception_4a..4e; G = the rest).
    """
    nodes = _model_nodes(model)
    for arg, endpoints in (("start", model.inputs), ("end", model.outputs)):
        if (start if arg == "start" else end) is None and len(endpoints) != 1:
            raise ValueError(
                f"Model {model.name!r} has {len(endpoints)} {arg}points; name a layer as "
                f"`{arg}`. Received: {arg}=None"
            )
    start_tensor = model.inputs[0] if start is None else _output_of(model, nodes, start)
    end_tensor = model.outputs[0] if end is None else _output_of(model, nodes, end)
    if start_tensor is end_tensor:
        raise ValueError(
            f"`start` and `end` name the same tensor; the segment would be empty. "
            f"Received: start={start!r}, end={end!r}"
        )

    input_name = start_tensor.name if start is None else f"{start}_input"
    new_input = keras.Input(
        shape=tuple(start_tensor.shape[1:]), dtype=start_tensor.dtype, name=input_name
    )
    values = replay(end_tensor, {id(start_tensor): new_input}, start=start, end=end, model=model)
    name = name or f"{model.name}_{start or 'input'}_to_{end or 'output'}"
    return keras.Model(new_input, values[id(end_tensor)], name=name)
