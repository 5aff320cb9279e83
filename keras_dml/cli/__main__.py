"""`python -m keras_dml.cli`: the `keras-dml` command."""

import sys

from keras_dml.cli import main

sys.exit(main())
