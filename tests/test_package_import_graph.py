"""keras_dml's files import one way: no import cycle, in-function imports never more.

Every import is an edge, one inside a function too, so a cycle cannot hide behind a deferred
import. The in-function imports of keras_dml left each name, on their line, the dependency they
defer: TensorFlow for the tf.data pipeline (optional on JAX and PyTorch), and Keras for the
zoo's object registration (`keras-dml zoo list` stays Keras-free, tests/zoo/test_light_import.py).
The command line loads its run modules from a table (keras_dml_cli/dispatch.py).
"""

import ast
import os
import re

from tests.support.import_graph import import_cycles, import_graph

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Imports of keras_dml inside function bodies today. This number must only go down: lower it
# when you move one to the top of its module; never raise it to hide a cycle.
FUNCTION_IMPORTS_CEILING = 1


# What a deferred import's line must say: the dependency it keeps out of the importing module.
DEFERRED = re.compile(r"# (noqa: F401 \()?(optional|heavy) dependency: \w+")


def in_function_imports(root, package):
    """`(path, line number, source line)` of every import of `package` inside a function."""
    found = []
    for folder, _, names in os.walk(os.path.join(root, package)):
        for name in sorted(n for n in names if n.endswith(".py")):
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as file:
                source = file.read()
            lines = source.splitlines()
            functions = [
                node
                for node in ast.walk(ast.parse(source))
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
            for node in {id(n): n for f in functions for n in ast.walk(f)}.values():
                if isinstance(node, ast.ImportFrom):
                    modules = [node.module or ""]
                elif isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                else:
                    continue
                if any(m.split(".")[0] == package for m in modules):
                    where = os.path.relpath(path, root)
                    found.append((where, node.lineno, lines[node.lineno - 1].strip()))
    return sorted(found)


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


def test_every_deferred_import_names_the_dependency_it_defers():
    unnamed = [
        f"{path}:{line}: {text}"
        for path, line, text in in_function_imports(ROOT, "keras_dml")
        if not DEFERRED.search(text)
    ]
    assert not unnamed, (
        "Imports of keras_dml inside functions must defer an optional or heavy dependency and "
        "say which on their line (`# optional dependency: tensorflow`); import these at the top "
        "of the module: " + "; ".join(unnamed)
    )


def test_the_deferred_import_check_sees_a_bare_one(tmp_path):
    write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "def f():\n    from pkg import b\n",
            "pkg/b.py": "def g():\n    import pkg.a  # optional dependency: faiss\n",
        },
    )
    found = in_function_imports(str(tmp_path), "pkg")
    assert [(p, n) for p, n, _ in found] == [
        (os.path.join("pkg", "a.py"), 2),
        (os.path.join("pkg", "b.py"), 2),
    ]
    assert [bool(DEFERRED.search(text)) for _, _, text in found] == [False, True]


def architecture_floors():
    """`{sub-package: floor}` of the table on docs/architecture.md."""
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as file:
        page = file.read()
    table = page.split("<!-- floors:start -->")[1].split("<!-- floors:end -->")[0]
    floors = {}
    for row in table.strip().splitlines()[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        for name in re.findall(r"`(\w+)`", cells[1]):
            floors[name] = int(cells[0])
    return floors


def sub_package_edges(root, package):
    """`{(importing sub-package, imported sub-package)}` of `package`'s files."""
    edges, _ = import_graph(root, package)

    def sub(path):
        parts = os.path.relpath(path, os.path.join(root, package)).split(os.sep)
        return parts[0].removesuffix(".py")

    return {
        (sub(source), sub(target))
        for source, targets in edges.items()
        for target in targets
        if sub(source) != sub(target) and sub(target) != "__init__" and sub(source) != "__init__"
    }


def test_every_sub_package_imports_only_the_floors_below_it():
    floors = architecture_floors()
    subs = {
        name.removesuffix(".py")
        for name in os.listdir(os.path.join(ROOT, "keras_dml"))
        if not name.startswith("__")
        and (name.endswith(".py") or os.path.isdir(os.path.join(ROOT, "keras_dml", name)))
    }
    assert subs == set(floors), "docs/architecture.md's floors table lists every sub-package"
    upward = sorted(
        f"{source} (floor {floors[source]}) imports {target} (floor {floors[target]})"
        for source, target in sub_package_edges(ROOT, "keras_dml")
        if floors[target] >= floors[source]
    )
    assert not upward, "; ".join(upward)
