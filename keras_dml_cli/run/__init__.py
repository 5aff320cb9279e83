"""The sub-commands that run (they import keras_dml, hence Keras): one module each."""
