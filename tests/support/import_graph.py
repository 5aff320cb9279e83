"""The import graph of a package's files: every import is an edge, inside a function too.

`from pkg import name` goes to `pkg/name.py` when that is a module, else to `pkg/__init__.py`
(every import is an edge, one inside a function too). Used by tests/test_package_import_graph.py.
"""

import ast
import os


def module_file(root, dotted):
    """The file of module `dotted` under `root` (a package's `__init__.py`), or `None`."""
    base = os.path.join(root, *dotted.split("."))
    if os.path.isfile(os.path.join(base, "__init__.py")):
        return os.path.join(base, "__init__.py")
    return base + ".py" if os.path.isfile(base + ".py") else None


def _targets(node, package_parts, root):
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    module = node.module or ""
    if node.level:
        base = package_parts[: len(package_parts) - (node.level - 1)]
        module = ".".join(base + ([module] if module else []))
    return [
        f"{module}.{alias.name}" if module_file(root, f"{module}.{alias.name}") else module
        for alias in node.names
    ]


def import_graph(root, package):
    """Edges between the `.py` files of `package` and its count of imports inside functions.

    Args:
        root: str. The folder holding the package folder.
        package: str. The top-level package name.

    Returns:
        `(edges, function_imports)`: dict `{file: set of files it imports}` (paths relative to
        `root`), and the number of import statements of `package` inside a function body.
    """
    files = sorted(
        os.path.relpath(os.path.join(folder, name), root)
        for folder, _, names in os.walk(os.path.join(root, package))
        for name in names
        if name.endswith(".py")
    )
    edges, function_imports = {path: set() for path in files}, 0
    for path in files:
        package_parts = path[:-3].split(os.sep)[:-1]
        with open(os.path.join(root, path), encoding="utf-8") as file:
            tree = ast.parse(file.read())
        functions = [
            n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        inside = {id(n) for fn in functions for n in ast.walk(fn)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = [t for t in _targets(node, package_parts, root) if t.split(".")[0] == package]
            function_imports += bool(targets) and id(node) in inside
            for target in targets:
                target_file = module_file(root, target)
                if target_file and os.path.relpath(target_file, root) != path:
                    edges[path].add(os.path.relpath(target_file, root))
    return edges, function_imports


def import_cycles(edges):
    """The cycles of `edges`: each strongly connected set of two or more files, sorted."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(start):
        # Tarjan's algorithm, iterative (a deep package would overflow Python's recursion).
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            successor = next(successors, None)
            if successor is not None:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                elif successor in on_stack:
                    low[node] = min(low[node], index[successor])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(cycles)
