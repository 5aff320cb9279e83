"""keras_dml's files import one way: no import cycle, in-function imports never more (issue 30).

Every import is an edge, one inside a function too, so a cycle cannot hide behind a deferred
import. The in-function imports of keras_dml left are optional or heavy dependencies kept out of
`keras-dml --help` and light commands (tests/cli/test_help_imports.py) and plugin look-ups.
"""

import os

from tests.support.import_graph import import_cycles, import_graph

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Imports of keras_dml inside function bodies today. This number must only go down: lower it
# when you move one to the top of its module; never raise it to hide a cycle.
FUNCTION_IMPORTS_CEILING = 60


def write_package(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as file:
            file.write(text)


def test_keras_dml_has_no_import_cycle():
    edges, _ = import_graph(ROOT, "keras_dml")
    assert len(edges) > 200  # the walk found the package
    cycles = import_cycles(edges)
    assert not cycles, "; ".join(
        f"Import cycle among {', '.join(cycle)}: make their imports point one way"
        for cycle in cycles
    )


def test_in_function_imports_of_keras_dml_do_not_grow():
    _, function_imports = import_graph(ROOT, "keras_dml")
    assert function_imports <= FUNCTION_IMPORTS_CEILING, (
        f"{function_imports} imports of keras_dml inside functions (ceiling "
        f"{FUNCTION_IMPORTS_CEILING}): import at the top of the module, or move the code so the "
        "imports point one way."
    )


def test_a_cycle_closed_inside_a_function_is_found(tmp_path):
    write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low.py": "def f():\n    from pkg.high import g\n    return g\n",
            "pkg/high.py": "from pkg import low\n\ng = low\n",
            "pkg/leaf.py": "import os\nfrom . import low\n",
            "pkg/sub/__init__.py": "from pkg.sub.a import A\n",
            "pkg/sub/a.py": "from ..leaf import low as A\n",
        },
    )
    edges, function_imports = import_graph(str(tmp_path), "pkg")
    assert edges[os.path.join("pkg", "sub", "a.py")] == {os.path.join("pkg", "leaf.py")}
    assert edges[os.path.join("pkg", "sub", "__init__.py")] == {os.path.join("pkg", "sub", "a.py")}
    assert function_imports == 1
    assert import_cycles(edges) == [[os.path.join("pkg", "high.py"), os.path.join("pkg", "low.py")]]


def test_one_way_imports_have_no_cycle(tmp_path):
    write_package(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.high import g\n",
            "pkg/low.py": "x = 1\n",
            "pkg/high.py": "from pkg.low import x\n\ndef g():\n    from pkg import low\n",
        },
    )
    edges, function_imports = import_graph(str(tmp_path), "pkg")
    assert import_cycles(edges) == [] and function_imports == 1
