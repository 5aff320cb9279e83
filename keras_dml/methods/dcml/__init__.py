from keras_dml.methods.dcml import spec  # noqa: F401 (registers the method)
