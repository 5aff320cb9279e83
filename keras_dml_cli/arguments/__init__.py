"""The arguments of each `keras-dml` sub-command and the early checks, without Keras."""
