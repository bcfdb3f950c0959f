"""The package's import graph has no cycle, and its layers import one way.

Read from the source with ``ast``: an edge for every import a module makes
when it is loaded (top-level statements; imports inside functions, which run
later, and ``if TYPE_CHECKING:`` blocks are not loading). A cycle would mean
two modules that cannot be understood, tested or loaded one without the other.

The layers are checked on every import, those inside functions included: a
lazy import that runs back up is still an arrow back up.
"""

from __future__ import annotations

import ast
from pathlib import Path

import giql_spark

ROOT = Path(giql_spark.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _loading_imports(tree: ast.Module):
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.If, ast.Try)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    yield sub


def _every_import(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def import_graph(imports=_loading_imports) -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                # ``from pkg import mod`` imports a module; ``from mod import name`` the module itself.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    assert len(graph) > 50 and graph["giql_spark.session"]  # the graph was read
    cycle = find_cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


#: Top to bottom; a unit may import only units on lower rows. A unit is the
#: package itself, a top-level module, or a top-level sub-package (with all
#: it holds).
LAYERS = [
    ["giql_spark", "giql_spark.cli"],
    ["giql_spark.session"],
    ["giql_spark.dataframe"],
    ["giql_spark.runtime"],
    ["giql_spark.streaming"],
    ["giql_spark.language"],   # GIQL text -> rewritten tree -> plan nodes
    ["giql_spark.planner"],    # plan nodes, statistics, cost, the strategy registry and chooser
    ["giql_spark.joins"],      # one module per physical strategy
    ["giql_spark.kernels", "giql_spark.io"],  # io reads through the jar's readers where a session has it
    ["giql_spark.jvm"],        # the jar: built, installed, asked whether a session has it
    ["giql_spark.band"],       # band derivation over the interval arithmetic
    ["giql_spark.interval_arith"],  # interval arithmetic: a leaf anyone may use
    ["giql_spark.progress"],
    ["giql_spark.spark_sql", "giql_spark.errors", "giql_spark.examples"],
    ["giql_spark.spark_version"],  # what differs between Spark lines: asked by every layer
]


def _unit(module: str) -> str:
    return ".".join(module.split(".")[:2])


def upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    rank = {unit: i for i, row in enumerate(layers) for unit in row}
    out = []
    for a, targets in sorted(graph.items()):
        for b in sorted(targets):
            ua, ub = _unit(a), _unit(b)
            if ua == ub:
                continue
            if ua not in rank or ub not in rank:
                out.append(f"{a} -> {b}: {ua if ua not in rank else ub} has no layer")
            elif rank[ua] >= rank[ub]:
                out.append(f"{a} -> {b}")
    return out


def test_layers_import_one_way_lazy_imports_included():
    graph = import_graph(_every_import)
    assert graph["giql_spark.runtime"] & {m for m in graph if m.startswith("giql_spark.streaming")}  # lazy edges read
    assert upward_imports(graph) == []


def test_the_layer_check_finds_an_arrow_back_up():
    graph = {"giql_spark.joins.binned": {"giql_spark.planner.cost"}, "giql_spark.planner.cost": set(),
             "giql_spark.new.thing": set(), "giql_spark.language.x": {"giql_spark.new.thing"}}
    assert upward_imports(graph) == ["giql_spark.joins.binned -> giql_spark.planner.cost",
                                     "giql_spark.language.x -> giql_spark.new.thing: giql_spark.new has no layer"]
