"""The package's import graph, built from the source: no cycles, no upward imports.

Layers, bottom to top: ``_core`` -> ``plots`` -> topic packages (``pairwise``, ``noise``,
``calibration``) -> the TEE core in its rooms (``families`` -> ``design``, which reads pairwise
verdicts -> ``gstudy``, the algebra without draws -> ``likelihoods`` -> ``posterior`` -> ``tee``,
the front door) -> ``allocation`` and ``io`` -> ``studies`` -> ``datasets`` -> ``cli``. A module
may import its own layer's modules (acyclically) and any lower layer. Every import counts: one
hidden in a function, and one made only for type checking (under ``if TYPE_CHECKING:``), since a
type that names an upper module is a dependency on it all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "bayes_tee"

#: Rank of each top-level room; equal ranks may not import each other.
LAYERS = {
    "_core": 0,
    "data": 0,  # the embedded data files (no code)
    "plots": 1,
    "pairwise": 2,
    "noise": 2,
    "calibration": 2,
    "families": 3,  # what depends on the outcome family: link, scale, standardising, defaults
    "design": 4,  # data -> Design: terms, formula, roles, out-of-core statistics
    "gstudy": 5,  # divisors, D-study weights, G/Phi weights, layouts: algebra that needs no draws
    "likelihoods": 6,  # Design + priors -> a density (PyMC model or numba kernel)
    "posterior": 7,  # a plain Fit, one module per question asked of it, reports, the facade
    "tee": 8,  # the front door: fit_posterior's stages and the refits
    "allocation": 9,
    "adaptive": 9,  # the adaptive loop and the Inspect hook: fits (tee) and asks the posterior
    "io": 9,  # log readers: fill the roles design.roles reads
    "studies": 10,
    "datasets": 11,
    "cli": 12,
}
#: No room may hold more than this share of the package's non-blank lines.
MAX_ROOM_SHARE = 0.30
MAX_MODULE_LINES = 500
MAX_POSTERIOR_LINES = 350
#: Modules the posterior room's facade alone may name or import.
FACADE = "bayes_tee.posterior.facade"
REPORTS = "bayes_tee.posterior.reports"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Package modules imported by ``path`` anywhere in its body, type-checking blocks included."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "bayes_tee")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "bayes_tee":
                return
            for alias in node.names:  # `from pkg import module` imports the module
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules) for p in paths}


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_room_has_a_layer():
    rooms = {_room(m) for m in _graph()} - {None}
    assert rooms <= set(LAYERS), f"add {sorted(rooms - set(LAYERS))} to LAYERS"


def test_no_upward_or_sideways_import():
    bad = []
    for mod, deps in _graph().items():
        room = _room(mod)
        if room is None:  # bayes_tee/__init__.py sits on top and may import anything
            continue
        for dep in deps:
            other = _room(dep)
            if other is None:
                bad.append(f"{mod} -> {dep} (the package root)")
            elif other != room and LAYERS[other] >= LAYERS[room]:
                bad.append(f"{mod} -> {dep} ({room} is layer {LAYERS[room]}, {other} is {LAYERS[other]})")
    assert not bad, "imports that flow the wrong way:\n" + "\n".join(sorted(bad))


def test_no_import_cycle():
    graph = _graph()
    # package __init__ files re-export their modules; an edge into one is an edge into what it
    # re-exports, so cycles through them are real cycles and are kept in the graph
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def dfs(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep) :] + [dep])
            elif dep not in state:
                dfs(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            dfs(node)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _nonblank(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def test_no_module_is_too_long():
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := _nonblank(p)) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} non-blank lines: {long}"


def test_posterior_is_a_thin_facade():
    tree = ast.parse((PACKAGE / "posterior" / "facade.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Posterior")
    assert cls.end_lineno - cls.lineno + 1 < MAX_POSTERIOR_LINES


def test_no_room_is_too_large():
    per_room: dict[str, int] = {}
    for p in PACKAGE.rglob("*.py"):
        room = _room(_module_name(p)) or "<root>"
        per_room[room] = per_room.get(room, 0) + _nonblank(p)
    total = sum(per_room.values())
    big = {r: f"{n / total:.0%}" for r, n in per_room.items() if n > MAX_ROOM_SHARE * total}
    assert not big, f"rooms over {MAX_ROOM_SHARE:.0%} of the package's lines: {big}"


def test_the_graph_sees_function_level_imports(tmp_path):
    """The scanner itself: an import inside a function and a relative ``from . import`` count."""
    src = tmp_path / "bayes_tee" / "tee"
    src.mkdir(parents=True)
    (src / "a.py").write_text("def f():\n    from . import b\n    from ..plots import x\n")
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path / "bayes_tee"
    try:
        found = _imports(src / "a.py", {"bayes_tee.tee.a", "bayes_tee.tee.b", "bayes_tee.plots"})
    finally:
        PACKAGE = saved
    assert found == {"bayes_tee.tee.b", "bayes_tee.plots"}


def test_the_graph_sees_type_checking_imports(tmp_path):
    """An import made only for type checking is an edge of the graph too."""
    src = tmp_path / "bayes_tee" / "posterior"
    src.mkdir(parents=True)
    (src / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .facade import P\n"
    )
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path / "bayes_tee"
    try:
        found = _imports(src / "a.py", {"bayes_tee.posterior.a", "bayes_tee.posterior.facade"})
    finally:
        PACKAGE = saved
    assert found == {"bayes_tee.posterior.facade"}
    assert _is_type_checking(ast.parse("if TYPE_CHECKING:\n    pass").body[0])


def _names_posterior(path: Path) -> bool:
    """Whether ``path``'s code (not its prose) names the class ``Posterior`` or ``SystemsPosterior``."""
    tree = ast.parse(path.read_text())
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    names |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    strings = {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }  # annotations written as strings
    return bool({"Posterior", "SystemsPosterior"} & (names | strings))


def test_only_the_facade_names_posterior():
    """The questions are functions of a plain Fit: in the posterior room only the facade knows the
    class users hold, so no question can call back into it.
    """
    room = PACKAGE / "posterior"
    naming = sorted(
        _module_name(p) for p in room.rglob("*.py") if _module_name(p) != FACADE and _names_posterior(p)
    )
    assert not naming, f"modules of the posterior room that name Posterior: {naming}"


def test_only_the_facade_imports_the_reports():
    bad = sorted(
        mod
        for mod, deps in _graph().items()
        if not mod.startswith(REPORTS)
        and mod not in (FACADE, "bayes_tee.posterior")
        and any(d == REPORTS or d.startswith(REPORTS + ".") for d in deps)
    )
    assert not bad, f"modules that import the reports (only the facade may): {bad}"
