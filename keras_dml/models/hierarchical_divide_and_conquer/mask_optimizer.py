"""A second optimizer for the soft masks: a real per-variable learning-rate multiplier.

Keras 3 optimizers have one learning rate for every variable they update, and scaling the
gradients does not change an Adam step (Adam divides by the gradient's running RMS). The
hierarchical D&C reference code gives the masks their own parameter group with a larger learning
rate (x100 in its README example), so the model updates the masks with a clone of the main
optimizer whose learning rate is `base x multiplier` (`build_mask_optimizer`). A learning-rate
schedule is wrapped in `ScaledSchedule`, so warm-ups and decays apply to the masks too.
"""

import keras


@keras.saving.register_keras_serializable(package="keras_dml")
class ScaledSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """A learning-rate schedule multiplied by a constant factor.

    Args:
        schedule: `keras.optimizers.schedules.LearningRateSchedule` (or its serialized dict).
        factor: float. Multiplier (> 0).

    Examples:
    >>> base = keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.5)
    >>> round(float(ScaledSchedule(base, 100.0)(0)), 6)
    0.1
    """

    def __init__(self, schedule, factor):
        if isinstance(schedule, dict):
            schedule = keras.optimizers.schedules.deserialize(schedule)
        if not isinstance(schedule, keras.optimizers.schedules.LearningRateSchedule):
            raise ValueError(f"`schedule` must be a LearningRateSchedule. Received: {schedule!r}")
        if float(factor) <= 0.0:
            raise ValueError(f"`factor` must be > 0. Received: factor={factor}")
        self.schedule = schedule
        self.factor = float(factor)

    def __call__(self, step):
        return self.schedule(step) * self.factor

    def get_config(self):
        return {
            "schedule": keras.optimizers.schedules.serialize(self.schedule),
            "factor": self.factor,
        }


def build_mask_optimizer(optimizer, multiplier, name="mask_optimizer"):
    """A fresh optimizer of the same class and settings as `optimizer`, learning rate x multiplier.

    Args:
        optimizer: `keras.optimizers.Optimizer`. The model's main optimizer (a
            `LossScaleOptimizer` contributes its inner optimizer).
        multiplier: float. Learning-rate multiplier of the masks (> 0).
        name: str. Name of the new optimizer. Defaults to `"mask_optimizer"`.

    Returns:
        An unbuilt `keras.optimizers.Optimizer` with no state.

    Examples:
    >>> masks = build_mask_optimizer(keras.optimizers.Adam(1e-5), 100.0)
    >>> round(float(masks.learning_rate), 6)
    0.001

    References:
        Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI 2021
        (reference implementation: masks in their own parameter group with a larger learning rate).
    """
    if float(multiplier) <= 0.0:
        raise ValueError(f"`mask_lr_multiplier` must be > 0. Received: {multiplier}")
    if isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
        optimizer = optimizer.inner_optimizer
    config = optimizer.get_config()
    learning_rate = config["learning_rate"]
    if isinstance(learning_rate, dict):
        learning_rate = ScaledSchedule(learning_rate, multiplier)
    else:
        learning_rate = float(learning_rate) * float(multiplier)
    config.update(learning_rate=learning_rate, name=name)
    return type(optimizer).from_config(config)


def reset_optimizer_state(optimizer):
    """Zeroes an optimizer's step counter and slots (moments), keeping its learning rate.

    Equivalent to replacing it with a new optimizer over the same variables (what the reference
    code does for the masks after each division), without rebuilding the compiled train step.
    """
    if not optimizer.built:
        return
    for variable in optimizer.variables:
        if variable.path.split("/")[-1] == "learning_rate":
            continue
        variable.assign(keras.ops.zeros(variable.shape, variable.dtype))
