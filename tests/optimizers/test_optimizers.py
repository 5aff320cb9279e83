"""`LearningRateMultipliers`: per-variable learning rates, runtime changes, `.keras` state."""

import keras
import numpy as np
import pytest

from keras_dml.optimizers import LearningRateMultipliers

X = np.random.default_rng(0).random((8, 4)).astype("float32")
Y = np.random.default_rng(1).random((8, 2)).astype("float32")


def small_model(seed=0):
    keras.utils.set_random_seed(seed)
    inputs = keras.Input((4,))
    hidden = keras.layers.Dense(3, name="body")(inputs)
    return keras.Model(inputs, keras.layers.Dense(2, name="head")(hidden))


def weights_of(model):
    return {w.path: keras.ops.convert_to_numpy(w).copy() for w in model.weights}


def one_step(optimizer):
    model = small_model()
    model.compile(optimizer=optimizer, loss="mse")
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    return model, weights_of(model)


def test_each_variable_steps_with_its_multiplied_learning_rate():
    start = weights_of(small_model())
    _, wrapped = one_step(
        LearningRateMultipliers(keras.optimizers.SGD(0.1), {"head": 10.0, "body/bias": 0.0})
    )
    _, plain = one_step(keras.optimizers.SGD(0.1))
    _, fast = one_step(keras.optimizers.SGD(1.0))
    np.testing.assert_allclose(wrapped["body/kernel"], plain["body/kernel"], rtol=1e-6)
    np.testing.assert_array_equal(wrapped["body/bias"], start["body/bias"])
    for path in ("head/kernel", "head/bias"):
        np.testing.assert_allclose(wrapped[path], fast[path], rtol=1e-5, atol=1e-7)
        assert np.abs(wrapped[path] - start[path]).max() > 0


def test_adam_group_steps_match_an_adam_at_the_multiplied_rate():
    _, wrapped = one_step(LearningRateMultipliers(keras.optimizers.Adam(1e-3), {"head": 10.0}))
    _, plain = one_step(keras.optimizers.Adam(1e-3))
    _, fast = one_step(keras.optimizers.Adam(1e-2))
    np.testing.assert_allclose(wrapped["body/kernel"], plain["body/kernel"], rtol=1e-6)
    np.testing.assert_allclose(wrapped["head/kernel"], fast["head/kernel"], rtol=1e-5)


def test_state_and_multipliers_survive_a_keras_round_trip(tmp_path):
    def optimizer():
        return LearningRateMultipliers(keras.optimizers.Adam(1e-2), {"head": 5.0})

    model, _ = one_step(optimizer())
    model.optimizer.set_multiplier("head", 3.0)
    model.save(tmp_path / "m.keras")
    reloaded = keras.saving.load_model(tmp_path / "m.keras")
    assert isinstance(reloaded.optimizer, LearningRateMultipliers)
    assert reloaded.optimizer.get_multiplier("head") == 3.0
    saved = [keras.ops.convert_to_numpy(v) for v in model.optimizer.variables]
    loaded = [keras.ops.convert_to_numpy(v) for v in reloaded.optimizer.variables]
    assert len(saved) == len(loaded) > 4
    for a, b in zip(saved, loaded):
        np.testing.assert_array_equal(a, b)
    # The moments came back: one more step from the file equals one more step in memory.
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    reloaded.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    for path, value in weights_of(model).items():
        np.testing.assert_allclose(weights_of(reloaded)[path], value, rtol=1e-6)


def test_set_multiplier_freezes_between_epochs_and_follows_the_inner_rate():
    optimizer = LearningRateMultipliers(keras.optimizers.SGD(0.1), {"head": 1.0})
    model, first = one_step(optimizer)
    optimizer.set_multiplier("head", 0.0)
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    second = weights_of(model)
    np.testing.assert_array_equal(second["head/kernel"], first["head/kernel"])
    assert np.abs(second["body/kernel"] - first["body/kernel"]).max() > 0
    optimizer.learning_rate = 0.0  # e.g. ReduceLROnPlateau: every group follows the inner rate
    optimizer.set_multiplier("head", 1.0)
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    for path, value in weights_of(model).items():
        np.testing.assert_array_equal(value, second[path])
    assert optimizer.scaled_variables("head") == ["head/bias", "head/kernel"]


def test_bad_arguments_name_the_fix():
    with pytest.raises(ValueError, match=r"multipliers\['head'\]=-1"):
        LearningRateMultipliers("adam", {"head": -1})
    with pytest.raises(ValueError, match="not a regular expression"):
        LearningRateMultipliers("adam", {"(": 2.0})
    with pytest.raises(ValueError, match="inner optimizer"):
        LearningRateMultipliers("adam", {"head": 2.0}, weight_decay=0.1)
    with pytest.raises(ValueError, match="Known patterns"):
        LearningRateMultipliers("adam", {"head": 2.0}).set_multiplier("heads", 1.0)
