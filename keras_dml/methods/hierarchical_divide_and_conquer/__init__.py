from keras_dml.methods.hierarchical_divide_and_conquer import spec  # noqa: F401 (registers the method)
