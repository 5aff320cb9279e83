"""The package describes itself as Keras 3 on its three backends, in every place.

keras-dml trains on TensorFlow, JAX and PyTorch; its one-line descriptions (the package metadata,
the package docstring, the site's description, the README's and the site's first paragraph) say
so, and none calls it a "Keras 3 / TensorFlow" library.
"""

import os
import re

import keras_dml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BACKENDS = ("TensorFlow", "JAX", "PyTorch")


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def first_paragraph(markdown):
    """The first paragraph after the page's title, on one line."""
    paragraphs = re.split(r"\n\s*\n", markdown.split("\n", 1)[1].strip())
    return " ".join(paragraphs[0].split())


def descriptions():
    package = re.search(r'^description = "(.+)"$', read("pyproject.toml"), re.M).group(1)
    site = re.search(r"^site_description: (.+)$", read("mkdocs.yml"), re.M).group(1)
    return {
        "pyproject.toml description": package,
        "keras_dml docstring": keras_dml.__doc__.splitlines()[0],
        "mkdocs.yml site_description": site,
        "README.md first paragraph": first_paragraph(read("README.md")),
        "docs/index.md first paragraph": first_paragraph(read("docs/index.md")),
    }


def test_every_description_names_keras_3_and_its_three_backends():
    wrong = {
        place: text
        for place, text in descriptions().items()
        if "Keras 3" not in text
        or "Keras 3 / TensorFlow" in text.replace("*", "")
        or not all(backend in text for backend in BACKENDS)
    }
    assert not wrong, f"these descriptions miss 'Keras 3 on TensorFlow, JAX and PyTorch': {wrong}"
