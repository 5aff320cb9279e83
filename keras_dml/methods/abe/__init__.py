from keras_dml.methods.abe import spec  # noqa: F401 (registers the method)
