"""The method pages' pictures: each is there, a small PNG, drawn by the script named.

`docs/make_method_images.py` draws what each ensemble method's learners retrieve from the zoo's
digits models (`digits_<method>_convnet`); each method page with such a model shows its picture.
Running the script loads five models and takes about 30 s, so it is not run here; what can go
stale is checked: the pictures, the pages that show them and the zoo models the script loads.
"""

import importlib.util
import os
import re

from tests.docs.test_commands import ROOT, SITE_PAGES


def script():
    path = os.path.join(ROOT, "docs", "make_method_images.py")
    spec = importlib.util.spec_from_file_location("make_method_images", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page_images(page):
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return re.findall(r"!\[[^\]]*\]\(([^)]+)\)", f.read())


def test_every_method_with_a_digits_zoo_model_shows_its_learners():
    from keras_dml import zoo

    published = {card["name"] for card in zoo.list_models(status="published")}
    drawn = set(script().METHODS)
    for page in (p for p in SITE_PAGES if p.startswith("docs/methods/")):
        method = os.path.basename(page)[:-3]
        shown = f"../images/methods/{method}_learners.png" in page_images(page)
        has_model = f"digits_{method}_convnet" in published and method != "baseline"
        assert shown == has_model == (method in drawn), page


def test_site_pictures_are_small_pngs():
    for page in SITE_PAGES:
        for image in page_images(page):
            path = os.path.normpath(os.path.join(ROOT, os.path.dirname(page), image))
            with open(path, "rb") as f:
                assert f.read(8) == b"\x89PNG\r\n\x1a\n", path
            assert os.path.getsize(path) < 100 * 1024, path
