"""The arguments of each `keras-dml` sub-command, and the checks that refuse bad ones early.

These modules import no Keras or TensorFlow: `keras-dml --help`, every sub-command's help and a
misspelt name answer at once. Each sub-command's run lives in its own module, loaded on dispatch
(`keras_dml_cli.dispatch`).
"""
