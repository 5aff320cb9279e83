"""Loading and static checks of the mutation catalogue (`catalogue.json`).

Each record names one deliberate change of a defining line and the tests that must fail on it:
`id`, `file` (relative to the repository root), `original` (exact text, found exactly once in the
file), `replacement`, `breaks` (the behaviour the change breaks) and `tests` (pytest node ids,
single tests where possible so the whole catalogue runs in minutes).
"""

import ast
import json
import pathlib

CATALOGUE = pathlib.Path(__file__).with_name("catalogue.json")
FIELDS = ("id", "file", "original", "replacement", "breaks", "tests")


def load_catalogue(path=CATALOGUE):
    """The catalogue's records, checked for their fields and unique ids.

    Args:
        path: path of the JSON file. Defaults to `tests/mutations/catalogue.json`.

    Returns:
        list of dicts with the keys of `FIELDS`.

    Raises:
        ValueError: a record misses a field, has an empty test list or repeats an id.
    """
    records = json.loads(pathlib.Path(path).read_text())
    seen = set()
    for record in records:
        missing = [field for field in FIELDS if not record.get(field)]
        if missing:
            raise ValueError(f"Mutation {record.get('id', '?')!r} lacks {missing}; fill them in.")
        if record["id"] in seen:
            raise ValueError(f"Mutation id {record['id']!r} is repeated; give each one its own id.")
        if record["original"] == record["replacement"]:
            raise ValueError(f"Mutation {record['id']!r} replaces its text by itself; change it.")
        seen.add(record["id"])
    return records


def stale_reason(record, root):
    """Why `record` no longer applies to the tree at `root`, or `None` when it applies.

    Args:
        record: one catalogue record.
        root: `pathlib.Path` of a repository root.

    Returns:
        str, a one-line message naming the mutation, the file and the fix; or `None`.
    """
    path = root / record["file"]
    if not path.is_file():
        return f"{record['id']}: {record['file']} does not exist; update the catalogue entry."
    count = path.read_text().count(record["original"])
    if count != 1:
        return (
            f"{record['id']}: its original text occurs {count} times in {record['file']} "
            "(must be exactly once); update the catalogue entry to the current code."
        )
    return None


def _parametrize_constants(function):
    """Literal values of a test function's `parametrize` decorators, as strings."""
    values = set()
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", "") == "parametrize":
            for node in ast.walk(decorator):
                if isinstance(node, ast.Constant):
                    values.add(str(node.value))
    return values


def missing_node_reason(node_id, root):
    """Why the pytest node `node_id` does not exist under `root`, or `None` when it does.

    The check is static (the test file is parsed, not imported): the file, the test function
    (inside its class for `Class::test`) and, for a `[param-id]` suffix, every `-`-separated part
    of the id among the literal values of the function's `parametrize` decorators.

    Args:
        node_id: str, e.g. `tests/test_x.py::test_y` or `tests/test_x.py::test_y[a-1]`.
        root: `pathlib.Path` of a repository root.

    Returns:
        str, a one-line message; or `None`.
    """
    path_part, _, rest = node_id.partition("::")
    path = root / path_part
    if not rest or not path.is_file():
        return f"{node_id}: no such test file or no test named; use a `file.py::test` node id."
    name, _, param = rest.partition("[")
    scope = ast.parse(path.read_text()).body
    function = None
    for part in name.split("::"):
        matches = [
            node
            for node in scope
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == part
        ]
        if not matches:
            return f"{node_id}: {part!r} is not defined in {path_part}; fix the node id."
        function = matches[0]
        scope = function.body
    if param:
        constants = _parametrize_constants(function)
        unknown = [piece for piece in param.rstrip("]").split("-") if piece not in constants]
        if unknown:
            return f"{node_id}: parameter id parts {unknown} are not parametrize values; fix it."
    return None


# Markers that take a test out of the README's command (`pyproject.toml`'s `addopts`).
OUTSIDE_DEFAULT_SUITE = ("slow", "backends")


def outside_default_suite_reason(node_id, root):
    """Why the test `node_id` is not in the default suite (a `slow` or `backends` mark on it or
    on its module), or `None`: CI runs the catalogue without the runner's baseline because the
    default suite has just passed every listed test (`.ci/run`).

    Args:
        node_id: str. A node id that `missing_node_reason` accepts.
        root: `pathlib.Path` of a repository root.

    Returns:
        str, a one-line message; or `None`.
    """
    path_part, _, rest = node_id.partition("::")
    module = ast.parse((root / path_part).read_text())
    marked = [
        statement.value
        for statement in module.body
        if isinstance(statement, ast.Assign)
        and any(getattr(target, "id", None) == "pytestmark" for target in statement.targets)
    ]
    scope = module.body
    for part in rest.partition("[")[0].split("::"):
        node = next(n for n in scope if getattr(n, "name", None) == part)
        marked += node.decorator_list
        scope = node.body
    for expression in marked:
        names = {n.attr for n in ast.walk(expression) if isinstance(n, ast.Attribute)}
        found = names & set(OUTSIDE_DEFAULT_SUITE)
        if found:
            return f"{node_id}: marked {sorted(found)}, not a default-suite test; list one that is."
    return None
