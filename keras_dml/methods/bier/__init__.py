from keras_dml.methods.bier import spec  # noqa: F401 (registers the method)
