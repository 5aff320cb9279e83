"""Backend-agnostic pieces for tests that run on TensorFlow, JAX and PyTorch.

Keras reads its backend at import (`KERAS_BACKEND`), so a test file runs on one backend per
pytest process; `.ci/run` runs the layer, loss and model tests once on TensorFlow (the default
suite) and once with `KERAS_BACKEND=jax`. What a test would otherwise write in TensorFlow:

- `tf.GradientTape` -> `gradients(fn, sources)` / `value_and_gradients(fn, sources)`;
- `tensor.numpy()` -> `to_numpy(tensor)` (`keras.ops.convert_to_numpy`);
- `tensor.dtype == "float32"` -> `dtype_name(tensor) == "float32"`;
- `tf.function(..., input_signature=..., jit_compile=...)` -> `traced(fn, signature, jit_compile)`;
- `tf.function` used only to speed up many draws of a seeded function -> `graph_on_tensorflow(fn)`;
- a test whose subject only exists on TensorFlow (SavedModel / ONNX export,
  `tf.distribute.MirroredStrategy`, `tf.data` internals) -> `@pytest.mark.tf_only("reason")`,
  which `tests/conftest.py` turns into a skip naming the reason on the other backends.

Examples:

    >>> layer = keras.layers.Dense(2)
    >>> layer.build((None, 3))
    >>> x = np.ones((4, 3), "float32")
    >>> grad_x, grad_kernel = gradients(
    ...     lambda inputs, kernel: keras.ops.sum(layer(inputs)), [x, layer.kernel]
    ... )
"""

import keras
import numpy as np
import pytest

BACKEND = keras.backend.backend()


def to_numpy(x):
    """A backend tensor, Keras variable or array as a NumPy array (detached on PyTorch)."""
    if BACKEND == "torch" and hasattr(x, "detach"):
        x = x.detach()
    return keras.ops.convert_to_numpy(x)


def dtype_name(x):
    """The dtype of a backend tensor, variable or array as Keras' string (`"float32"`): PyTorch
    tensors carry `torch.float32`, which never equals the string."""
    return keras.backend.standardize_dtype(x.dtype)


def value_and_gradients(fn, sources):
    """The value of `fn` and its gradients with respect to `sources` on the current backend.

    As with `tf.GradientTape.gradient`, a non-scalar output is summed first. A source the
    output does not depend on gets a zero gradient on every backend (TensorFlow's `None`).

    Args:
        fn: callable taking one positional argument per source and returning a tensor. For a
            `keras.Variable` source the argument is the variable's value; `fn` may use it or
            read the variable through its layer (both are differentiated). Variables read by
            `fn` but not listed stay constants. `fn` must not create variables (build layers
            before) and its variable updates (seed generators, moving statistics) are kept on
            TensorFlow and PyTorch and discarded on JAX.
        sources: list of `keras.Variable`s and float arrays / tensors (inputs).

    Returns:
        `(value, grads)`: the summed output as a NumPy scalar and one NumPy array per source.
    """
    sources = list(sources)
    if BACKEND == "tensorflow":
        value, grads = _tensorflow(fn, sources)
    elif BACKEND == "jax":
        value, grads = _jax(fn, sources)
    elif BACKEND == "torch":
        value, grads = _torch(fn, sources)
    else:
        raise NotImplementedError(f"No gradient helper for the Keras backend {BACKEND!r}.")
    shapes = [tuple(s.shape) for s in map(_as_array_like, sources)]
    grads = [
        np.zeros(shape, "float32") if g is None else to_numpy(g) for g, shape in zip(grads, shapes)
    ]
    return to_numpy(value), grads


def gradients(fn, sources):
    """The gradients of `value_and_gradients` alone (one NumPy array per source)."""
    return value_and_gradients(fn, sources)[1]


def _as_array_like(source):
    return source if isinstance(source, keras.Variable) else np.asarray(to_numpy(source))


def _tensorflow(fn, sources):
    import tensorflow as tf

    watched = [
        s.value if isinstance(s, keras.Variable) else tf.convert_to_tensor(to_numpy(s))
        for s in sources
    ]
    with tf.GradientTape() as tape:
        for tensor in watched:
            tape.watch(tensor)
        value = tf.reduce_sum(fn(*watched))
    return value, tape.gradient(value, watched)


def _jax(fn, sources):
    import jax
    import jax.numpy as jnp

    initial = [
        s.value if isinstance(s, keras.Variable) else jnp.asarray(to_numpy(s)) for s in sources
    ]

    def pure(values):
        mapping = [(s, v) for s, v in zip(sources, values) if isinstance(s, keras.Variable)]
        with keras.StatelessScope(state_mapping=mapping):
            return jnp.sum(fn(*values))

    return jax.value_and_grad(pure)(initial)


def _torch(fn, sources):
    import torch

    leaves = []
    for s in sources:
        if isinstance(s, keras.Variable):
            leaves.append(s.value)
        else:
            leaves.append(torch.tensor(to_numpy(s), requires_grad=True))
    value = torch.sum(fn(*leaves))
    grads = torch.autograd.grad(value, leaves, allow_unused=True)
    return value.detach(), [None if g is None else g.detach() for g in grads]


def traced(fn, signature=None, jit_compile=False, state=()):
    """`fn` compiled as the backend's trainers compile a step.

    TensorFlow: `tf.function` (with `jit_compile`, XLA). `signature` lists `(shape, dtype)`
    per argument; `None` dimensions stay unknown in the graph (e.g. the batch size). JAX:
    `jax.jit` (always XLA; shapes are those of the call, as in `model.fit`), run as Keras' JAX
    trainer runs a step: inside a `keras.StatelessScope`, the `state` variables passed in and
    their updates written back after the call, every other variable read as a constant and its
    updates dropped. PyTorch has no traced step in Keras' trainer: the test is skipped with
    that reason.

    Args:
        fn: callable of tensors.
        signature: optional list of `(shape, dtype)` of the arguments (TensorFlow only).
        jit_compile: whether TensorFlow compiles the graph with XLA.
        state: `keras.Variable`s `fn` reads and updates (e.g. a `SeedGenerator`'s `state`),
            carried in and out of the JAX function as the trainer carries a model's variables.

    Returns:
        The compiled callable.
    """
    if BACKEND == "tensorflow":
        import tensorflow as tf

        specs = None if signature is None else [tf.TensorSpec(s, d) for s, d in signature]
        return tf.function(fn, input_signature=specs, jit_compile=jit_compile)
    if BACKEND == "jax":
        import jax

        state = list(state)

        def pure(values, *args):
            with keras.StatelessScope(state_mapping=list(zip(state, values))) as scope:
                outputs = fn(*args)
            return outputs, [scope.get_current_value(v) for v in state]

        compiled = jax.jit(pure)

        def call(*args):
            outputs, values = compiled([v.value for v in state], *args)
            for variable, value in zip(state, values):
                variable.assign(value)
            return outputs

        return call
    pytest.skip(f"No traced graph to test on the {BACKEND} backend (Keras runs it eagerly).")


def graph_on_tensorflow(fn):
    """`tf.function(fn)` on TensorFlow (fast repeated calls), `fn` itself on other backends.

    For functions called many times that advance a `keras.random.SeedGenerator`: the generator's
    state is a variable, updated inside a TensorFlow graph and by eager calls elsewhere.
    """
    if BACKEND == "tensorflow":
        import tensorflow as tf

        return tf.function(fn)
    return fn
