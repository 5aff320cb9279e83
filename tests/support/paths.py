"""Folders the tests read: the repository, the reference values, the helper scripts."""

import os

SUPPORT_DIR = os.path.dirname(os.path.abspath(__file__))
TESTS_DIR = os.path.dirname(SUPPORT_DIR)
REPO_ROOT = os.path.dirname(TESTS_DIR)
REFERENCE_DIR = os.path.join(TESTS_DIR, "reference")
