"""`LearningRateMultipliers`: per-variable learning rates for any Keras optimizer and backend."""

import re

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_dml")
class LearningRateMultipliers(keras.optimizers.Optimizer):
    """Wraps an optimizer and scales the learning rate of the variables matching patterns.

    Args:
        inner_optimizer: `keras.optimizers.Optimizer` or its identifier.
        multipliers: dict `pattern -> float`. Regular expressions over `variable.path` and their
            learning-rate factors (>= 0; 0 freezes). Defaults to `None`.
        name: str. Defaults to `None`.

    Examples:
    >>> optimizer = LearningRateMultipliers(keras.optimizers.Adam(1e-4), {"head": 10.0})
    >>> optimizer.set_multiplier("head", 0.0)  # doctest: +SKIP (freezes the heads)

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 4 (embedding layer at
        10x); Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI
        2021 (masks in their own parameter group).
    """

    def __init__(self, inner_optimizer, multipliers=None, name=None, **kwargs):
        if kwargs:
            raise ValueError(
                "LearningRateMultipliers takes no optimizer arguments of its own; set them on the "
                f"inner optimizer. Received: {sorted(kwargs)}"
            )
        inner_optimizer = keras.optimizers.get(inner_optimizer)
        if isinstance(inner_optimizer, LearningRateMultipliers):
            raise ValueError("LearningRateMultipliers cannot wrap another LearningRateMultipliers.")
        multipliers = dict(multipliers or {})
        for pattern, value in multipliers.items():
            try:
                re.compile(pattern)
            except (re.error, TypeError) as error:
                raise ValueError(
                    f"Multiplier pattern {pattern!r} is not a regular expression ({error})."
                ) from error
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(
                    "Learning-rate multipliers must be numbers >= 0. "
                    f"Received: multipliers[{pattern!r}]={value!r}"
                )
        super().__init__(learning_rate=0.0, name=name)
        self.inner_optimizer = inner_optimizer
        self.multipliers = {pattern: float(value) for pattern, value in multipliers.items()}
        self._patterns = tuple(self.multipliers)
        # Read now: `build` may run inside a compiled step, where configs cannot be read.
        self._inner_config = inner_optimizer.get_config()
        self.group_optimizers = []
        self._groups = ()

    def build(self, var_list):
        """Builds one multiplier variable and one optimizer per pattern, and the inner one."""
        var_list = list(var_list)
        self.multiplier_variables = [
            self.add_variable(
                shape=(),
                dtype="float32",
                initializer=keras.initializers.Constant(value),
                aggregation="none",
                name=f"multiplier_{i}",
            )
            for i, value in enumerate(self.multipliers.values())
        ]
        groups = [[] for _ in range(len(self._patterns) + 1)]  # last: the inner optimizer's
        for position, variable in enumerate(var_list):
            group = next(
                (i for i, p in enumerate(self._patterns) if re.search(p, variable.path)),
                len(self._patterns),
            )
            groups[group].append(position)
        self._groups = tuple(tuple(group) for group in groups)
        config = self._inner_config
        self.group_optimizers = []
        for i in range(len(self._patterns)):
            group_config = {
                **config,
                "learning_rate": self._group_learning_rate(i),
                "name": f"{config.get('name') or 'optimizer'}_group_{i}",
            }
            optimizer = type(self.inner_optimizer).from_config(group_config)
            optimizer.build([var_list[p] for p in self._groups[i]])
            self.group_optimizers.append(optimizer)
        self.inner_optimizer.build([var_list[p] for p in self._groups[-1]])
        super().build(var_list)

    def _group_learning_rate(self, index):
        def learning_rate():
            base = ops.cast(self.inner_optimizer.learning_rate, "float32")
            return base * self.multiplier_variables[index]

        return learning_rate

    @property
    def patterns(self):
        """The patterns, in matching order."""
        return list(self._patterns)

    def group_optimizer(self, pattern):
        """The optimizer of `pattern`'s parameter group (after `build`)."""
        if not self.built:
            raise ValueError("The optimizer has no groups before `build` (or the first step).")
        return self.group_optimizers[self._index(pattern)]

    def scaled_variables(self, pattern):
        """Paths of the variables whose learning rate `pattern` scales (after `build`)."""
        group = self._groups[self._index(pattern)]
        return sorted(self._trainable_variables[p].path for p in group)

    def set_multiplier(self, pattern, value):
        """Sets `pattern`'s multiplier (a float >= 0) during training: 0 freezes, 1 unfreezes."""
        if float(value) < 0:
            raise ValueError(f"A multiplier must be >= 0. Received: value={value}")
        index = self._index(pattern)
        self.multipliers[pattern] = float(value)
        if self.built:
            self.multiplier_variables[index].assign(float(value))

    def get_multiplier(self, pattern):
        """The current multiplier of `pattern` (read from its variable once built)."""
        index = self._index(pattern)
        if not self.built:
            return self.multipliers[pattern]
        return float(ops.convert_to_numpy(self.multiplier_variables[index]))

    def _index(self, pattern):
        if pattern not in self.multipliers:
            raise ValueError(
                f"No multiplier for pattern {pattern!r}. Known patterns: {list(self._patterns)}."
            )
        return self._patterns.index(pattern)

    @property
    def variables(self):
        variables = self._variables + self.inner_optimizer.variables
        for optimizer in self.group_optimizers:
            variables = variables + optimizer.variables
        return variables

    def apply(self, grads, trainable_variables=None):
        if not self.built:
            self.build(trainable_variables)
        grads = list(grads)
        if trainable_variables is None:
            trainable_variables = self._trainable_variables
        trainable_variables = list(trainable_variables)
        if len(trainable_variables) != sum(len(group) for group in self._groups):
            raise ValueError(
                "LearningRateMultipliers steps the variables it was built with, all at once. "
                f"Received {len(trainable_variables)} variables for "
                f"{len(self._trainable_variables)}."
            )
        optimizers = [*self.group_optimizers, self.inner_optimizer]
        for optimizer, group in zip(optimizers, self._groups):
            pairs = [(grads[p], trainable_variables[p]) for p in group if grads[p] is not None]
            if pairs:
                optimizer.apply([g for g, _ in pairs], [v for _, v in pairs])

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        self.inner_optimizer.learning_rate = learning_rate

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    def scale_loss(self, loss):
        return self.inner_optimizer.scale_loss(loss)

    def finalize_variable_values(self, var_list):
        self.inner_optimizer.finalize_variable_values(var_list)

    def get_config(self):
        # Only the name of the base configuration applies (as for LossScaleOptimizer).
        return {
            "name": self.name,
            "inner_optimizer": keras.saving.serialize_keras_object(self.inner_optimizer),
            "multipliers": dict(self.multipliers),
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        inner = keras.saving.deserialize_keras_object(
            config.pop("inner_optimizer"), custom_objects=custom_objects
        )
        return cls(inner, **config)


def with_multipliers(optimizer, multipliers):
    """`optimizer` with `multipliers` added, its own patterns first (one wrapper, never two).

    Examples:
    >>> base = LearningRateMultipliers(keras.optimizers.Adam(1e-3), {"proxies$": 100.0})
    >>> with_multipliers(base, {"head": 10.0}).multipliers
    {'proxies$': 100.0, 'head': 10.0}
    """
    optimizer = keras.optimizers.get(optimizer)
    if not multipliers:
        return optimizer
    if not isinstance(optimizer, LearningRateMultipliers):
        return LearningRateMultipliers(optimizer, multipliers)
    if optimizer.built:
        raise ValueError(
            "Cannot add learning-rate multipliers to a LearningRateMultipliers that is already "
            "built; compile the model with a fresh optimizer."
        )
    merged = {**multipliers, **optimizer.multipliers}
    merged = {pattern: merged[pattern] for pattern in [*optimizer.multipliers, *multipliers]}
    return LearningRateMultipliers(optimizer.inner_optimizer, merged, name=optimizer.name)


def find_multipliers(optimizer):
    """The `LearningRateMultipliers` stepping a model: `optimizer`, the one inside it, or `None`."""
    if isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
        optimizer = optimizer.inner_optimizer
    return optimizer if isinstance(optimizer, LearningRateMultipliers) else None
