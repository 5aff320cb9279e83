"""`python -m keras_dml_cli`: the `keras-dml` command."""

import sys

from keras_dml_cli import main

sys.exit(main())
