"""The states of a model's `keras.random.SeedGenerator`s, saved and loaded with its weights."""

import keras
import numpy as np

# Key prefix of the seed states in the model's own entry of a weights file.
SEED_STATE_KEY = "seed_state_"


class SeedStateSaving:
    """Mixin of a `keras.Model`: its `SeedGenerator` states are saved and loaded with it.

    A file without seed states, or with another number of them, leaves the model's own.
    """

    def seed_states(self):
        """The state variables (int `[2]`) of the model's `SeedGenerator`s, in a fixed order."""
        weights = {id(w) for w in self.weights}
        return [v for v in self.variables if id(v) not in weights]

    def save_own_variables(self, store):
        super().save_own_variables(store)
        for i, state in enumerate(self.seed_states()):
            store[f"{SEED_STATE_KEY}{i}"] = keras.ops.convert_to_numpy(state)

    def load_own_variables(self, store):
        keys = list(store.keys())
        seed_keys = [key for key in keys if key.startswith(SEED_STATE_KEY)]
        own = {key: store[key] for key in keys if key not in seed_keys}
        super().load_own_variables(own)
        states = self.seed_states()
        if len(seed_keys) != len(states):  # an older file, or loaded with `compile=False`
            return
        for i, state in enumerate(states):
            state.assign(np.asarray(store[f"{SEED_STATE_KEY}{i}"]).astype(state.dtype))
