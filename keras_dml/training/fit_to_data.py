"""Fit the settings a user left unset to the training split: batch composition, learner counts.

Batch composition comes from `keras_dml.methods.batch_composition`. A method whose learners each
need their own classes (Divide & Conquer: every cluster needs two classes) gets at most
`usable classes // classes_per_learner` learners when the user did not set the count; a count the
user set that cannot work on the data fails with the CLI flag and configuration key that fix it.
"""

from keras_dml.methods.batch_composition import (  # noqa: F401 (re-exported)
    fit_batch_composition,
    usable_classes,
)

DEFAULT_LEARNERS = 4


def fit_learner_count(config, method, num_classes):
    """Caps the method's learner count to the data when the user did not set it.

    Args:
        config: resolved run configuration (its `model` entry is updated in place).
        method: `MethodSpec` with `learners_option` and `classes_per_learner`.
        num_classes: int. Usable training classes.

    Raises:
        ValueError: when the user's own count needs more classes than the split has.
    """
    if not method.classes_per_learner:
        return
    option = method.learners_option
    most = max(1, num_classes // method.classes_per_learner)
    requested = config["model"].get(option)
    if requested is None:
        config["model"][option] = min(DEFAULT_LEARNERS, most)
    elif requested > most:
        raise ValueError(
            f"Method {method.name!r} with {option}={requested} needs "
            f"{method.classes_per_learner} training classes per learner "
            f"({method.classes_per_learner * requested}), but the training split has "
            f"{num_classes} with 2 or more images. Use --num-learners {most} (config: "
            f'"model": {{"{option}": {most}}}). Received: {option}={requested}'
        )


def fit_to_data(config, method, train_labels):
    """Fills `batch_size`, `m_per_class` and the learner count from the training labels.

    Args:
        config: resolved run configuration; updated in place and returned.
        method: the run's `MethodSpec`.
        train_labels: array of the training split's labels.

    Returns:
        `config`.
    """
    num_classes = usable_classes(train_labels)
    config["batch_size"], config["m_per_class"] = fit_batch_composition(
        config["batch_size"], config["m_per_class"], num_classes
    )
    fit_learner_count(config, method, num_classes)
    return config
