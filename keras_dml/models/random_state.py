"""The model's random state (its `keras.random.SeedGenerator`s) saved with its weights.

Keras saves a layer's weights but not the states of its `SeedGenerator`s (`Layer.variables`
minus `Layer.weights`): a loss that draws at random (`MarginLoss`'s distance-weighted sampling,
`TripletLoss(mining="random")`, whose generators the model tracks, see
`EnsembleModel.compile`) and a `Dropout` layer would start over from their initial seeds in a run
resumed from `keras.callbacks.BackupAndRestore`, and draw other samples than the uninterrupted
run. `SeedStateSaving` writes these states next to the model's own variables (in `.keras` files
and `.weights.h5` checkpoints alike) and reads them back.

Why the checkpoint and not a seed derived from the step: a generator advances inside the compiled
training step (also on JAX, where its state is part of the step's state), by as many draws as
the losses make; saving its two integers is exact on every backend and keeps the losses as they
are.
"""

import keras
import numpy as np

# Key prefix of the seed states in the model's own entry of a weights file.
SEED_STATE_KEY = "seed_state_"


class SeedStateSaving:
    """Mixin of a `keras.Model`: its `SeedGenerator` states are saved and loaded with it.

    A file written before this existed has no seed states; loading it keeps the model's own.
    A model with another number of generators than the file (e.g. loaded with `compile=False`,
    so without its loss's generators) keeps its own too: the states only matter for continuing
    a training run, which rebuilds and compiles the same model.
    """

    def seed_states(self):
        """The state variables of every `SeedGenerator` in the model, in a fixed order.

        Returns:
            list of Keras variables (int, shape `[2]`).
        """
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
        if len(seed_keys) != len(states):
            return
        for i, state in enumerate(states):
            state.assign(np.asarray(store[f"{SEED_STATE_KEY}{i}"]).astype(state.dtype))
