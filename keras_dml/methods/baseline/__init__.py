from keras_dml.methods.baseline import spec  # noqa: F401 (registers the method)
