"""Mutation score: how many single-point mutants of a reference the bundled cases kill.

For a machine of the registry, this finds the reference implementation modules
its case runner calls (every ``inboxspec.impl.*`` module that ``Machine.run_case``'s
module imports from, and in that driver module itself the functions that
``run_case`` reaches; for a machine composed of others, the host, not the other
machines' modules, which are scored with their own machines, whose cases include
the host's projected cases), applies one small change at a time to their source, and
replays every bundled case of the machine through the mutated reference. A
mutant is *killed* when some case fails, raises or hangs, and *survives*
otherwise. Survivors are listed for triage; those judged equivalent (no case
could ever tell them apart through the protocol, or they reach only the Python
API) are listed with a reason in ``benchmarks/equivalent-mutants/<machine>.json``.

The target: every survivor is in that file, so every non-equivalent mutant
reachable through the protocol is killed by the cases alone. Each entry holds
``id`` and ``reason``; a reviewer who did not write the entry adds
``second_review`` (``"agreed"`` or ``"agreed: <note>"``), and the score prints
how many of a machine's entries have one. Other keys are ignored.

The operators are mutmut's usual ones, on the AST: comparison operators swapped
(``<`` and ``<=``, ``==`` and ``!=``, ``is`` and ``is not``, ``in`` and
``not in``), arithmetic and augmented assignment operators swapped, ``and`` and
``or`` swapped, ``not`` dropped, ``True`` and ``False`` swapped, an integer
plus one, a text changed, an assigned or returned value replaced by ``None``.
Docstrings, annotations and the messages of raised errors (never part of an
output) are left alone.

A mutant's id is ``module:scope:operator:hash``: the scope is the enclosing
function or class (or, outside functions, the name of the constant assigned),
and the hash covers the mutated node, the mutation and the statement around it
(see ``_content_hash``), never its position, so that adding code elsewhere in a
module renames no listed equivalent.

Each mutant runs in a forked child that re-imports ``inboxspec`` with the mutated
module in place, so mutants cannot leak into each other; a child that runs past
``--timeout`` seconds counts as killed.

Usage: python benchmarks/mutation_score.py [MACHINE ...] [--list] [--only ID] [--json]
Exit: 0 when every survivor is a listed equivalent, 1 otherwise.
"""

from __future__ import annotations

import argparse
import ast
import atexit
import contextlib
import copy
import hashlib
import importlib
import importlib.abc
import importlib.util
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

EQUIVALENTS_DIR = Path(__file__).parent / "equivalent-mutants"
IMPL_PACKAGE = "inboxspec.impl."

COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
    ast.In: ast.NotIn, ast.NotIn: ast.In,
}
BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult,
}
BOOLOP_SWAPS: dict[type[ast.boolop], type[ast.boolop]] = {ast.And: ast.Or, ast.Or: ast.And}


@dataclass(frozen=True)
class Mutant:
    # module:scope:operator:hash, where hash is _content_hash of the mutated node in its
    # statement: adding, removing or moving code elsewhere leaves it alone. Identical
    # mutants in one scope (the same statement twice in a function) take #2, #3, ... in
    # source order.
    id: str
    module: str
    line: int
    description: str
    # The index of the node in ast.walk order and what to do with it.
    node_index: int
    operator: str


def _skipped_nodes(tree: ast.AST) -> set[int]:
    """Nodes never mutated: docstrings, annotations, the messages of raised errors."""
    skipped: set[int] = set()

    def skip(node: ast.AST | None) -> None:
        if node is not None:
            skipped.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                skip(body[0])
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            skip(node.returns)
            for argument in (*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs):
                skip(argument.annotation)
        if isinstance(node, ast.AnnAssign):
            skip(node.annotation)
        if isinstance(node, ast.Raise):
            skip(node.exc)
    return skipped


def _scopes(tree: ast.AST) -> dict[int, str]:
    """The scope that names each node's mutants, as a dotted name.

    Inside a function, the innermost enclosing function or class. Outside one
    (the body of a module or a class), a value assigned to one name is scoped
    by that name, so the constants of a module each have their own scope
    (``DROP_REASONS``, ``Settings.DEFAULT``), and only what stands alone at
    module level is ``<module>``.
    """
    names: dict[int, str] = {}

    def visit(node: ast.AST, current: str, in_function: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            current = f"{current}.{node.name}" if current != "<module>" else node.name
            in_function = in_function or not isinstance(node, ast.ClassDef)
        elif not in_function and (bound := _bound_name(node)) is not None:
            current = f"{current}.{bound}" if current != "<module>" else bound
        names[id(node)] = current
        for child in ast.iter_child_nodes(node):
            visit(child, current, in_function)

    visit(tree, "<module>", False)
    return names


def _bound_name(node: ast.AST) -> str | None:
    """The one name an assignment statement binds, or None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


COLLECTIONS = (ast.Tuple, ast.List, ast.Set, ast.Dict)


def _contexts(tree: ast.AST) -> dict[int, ast.stmt | None]:
    """The statement that tells apart equal nodes: the innermost one that holds each node.

    None for an item of a collection literal: its own value and its scope (the
    constant's name) name it, so that a new item in ``DROP_REASONS`` renames no other.
    """
    contexts: dict[int, ast.stmt | None] = {}

    def visit(node: ast.AST, holder: ast.stmt | None, in_collection: bool) -> None:
        if isinstance(node, ast.stmt):
            holder = node
        contexts[id(node)] = None if in_collection else holder
        for child in ast.iter_child_nodes(node):
            visit(child, holder, isinstance(node, COLLECTIONS))

    visit(tree, None, False)
    return contexts


def _header(statement: ast.stmt) -> str:
    """A statement without the statements it holds: an ``if`` is its test, not its body."""
    shallow = copy.copy(statement)
    for block in ("body", "orelse", "finalbody", "handlers", "cases"):
        if isinstance(getattr(shallow, block, None), list):
            setattr(shallow, block, [])
    return _dump(shallow)


def _dump(node: object) -> str:
    """A node as text, as ``ast.dump`` writes it but with every field that is None or an empty list
    left out: the same text on every Python this project runs on. ``ast.dump``'s own is not (3.13
    leaves those fields out by default, and 3.12 gave definitions an empty ``type_params``), and the
    ids of the listed equivalents changed with the Python that ran the score."""
    if isinstance(node, ast.AST):
        fields = ", ".join(f"{name}={_dump(value)}" for name, value in ast.iter_fields(node)
                           if value is not None and not (isinstance(value, list) and not value))
        return f"{type(node).__name__}({fields})"
    if isinstance(node, list):
        return f"[{', '.join(_dump(item) for item in node)}]"
    return repr(node)


def _content_hash(node: ast.AST, operator: str, statement: ast.stmt | None) -> str:
    """A short hash of the mutation, the mutated node and the statement around it, not of its position.

    The statement (without its body) tells apart the same constant in two places, so
    ``self.count = 0`` and ``self.total = 0`` have their own ids; an edit inside an
    ``if``'s body leaves the mutants of its test alone.
    """
    context = _header(statement) if statement is not None else ""
    text = f"{operator}\n{_dump(node)}\n{context}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _operators(node: ast.AST) -> Iterator[tuple[str, str]]:
    """(operator name, description) for each mutation that applies to one node."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE_SWAPS:
        before = type(node.ops[0]).__name__
        yield f"{before}->{COMPARE_SWAPS[type(node.ops[0])].__name__}", "comparison swapped"
    elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in BINOP_SWAPS:
        yield f"{type(node.op).__name__}->{BINOP_SWAPS[type(node.op)].__name__}", "operator swapped"
    elif isinstance(node, ast.BoolOp):
        yield f"{type(node.op).__name__}->{BOOLOP_SWAPS[type(node.op)].__name__}", "and/or swapped"
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "drop-not", "not dropped"
    elif isinstance(node, ast.Assign) and not (isinstance(node.value, ast.Constant)
                                               and node.value.value is None):
        yield "assign-None", "assigned value replaced by None"
    elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        yield "return-None", "returned value replaced by None"
    elif isinstance(node, ast.Constant):
        if node.value is True or node.value is False:
            yield f"{node.value}->{not node.value}", "boolean flipped"
        elif type(node.value) is int:
            yield "int+1", f"{node.value} -> {node.value + 1}"
        elif isinstance(node.value, str) and node.value:
            yield "text", "text changed"


def _mutate_node(node: ast.AST, operator: str) -> ast.AST:
    if isinstance(node, ast.Compare):
        node.ops = [COMPARE_SWAPS[type(node.ops[0])]()]
    elif isinstance(node, ast.BinOp | ast.AugAssign):
        node.op = BINOP_SWAPS[type(node.op)]()
    elif isinstance(node, ast.BoolOp):
        node.op = BOOLOP_SWAPS[type(node.op)]()
    elif isinstance(node, ast.UnaryOp):
        return node.operand
    elif isinstance(node, ast.Assign | ast.Return):
        node.value = ast.Constant(None)
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            node.value = not node.value
        elif type(node.value) is int:
            node.value += 1
        elif isinstance(node.value, str):
            node.value = f"XX{node.value}XX"
    return node


def implementation_modules(machine: Any) -> list[str]:
    """The reference modules a machine's case runner calls, found through its imports."""
    driver = sys.modules[machine.run_case.__module__]
    found = set()
    for value in vars(driver).values():
        module = getattr(value, "__module__", None) if not isinstance(value, ModuleType) else value.__name__
        if isinstance(module, str) and module.startswith(IMPL_PACKAGE):
            found.add(module)
    return sorted(found)


def shared_modules(modules: Sequence[str], others: frozenset[str] = frozenset()) -> dict[str, frozenset[str]]:
    """The other ``inboxspec.impl`` modules that ``modules`` import from, followed in turn (the
    shared ``values``, ``options`` and ``errors``), each with the names of it that they reach:
    the definitions and constants they import, and what those name in the same module. So code
    that several machines share is mutated for each machine that calls it, and no more of it.
    Every import of one of ``modules`` is followed, whichever of them imports another. The
    modules in ``others`` (other machines' references, which a composed machine calls) are not
    followed: each is scored with its own machine."""
    wanted: dict[str, set[str]] = {}
    todo = list(modules)
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        # A module of ``modules`` is mutated whole, so all of its imports are followed, even when
        # another of them imports from it (and so holds an entry in ``wanted``, left empty).
        reached = None if module in modules else wanted.get(module)
        for imported, names in _impl_imports(module, reached).items():
            if imported in others:
                continue
            known = wanted.setdefault(imported, set())
            if imported not in modules and not names <= known:
                known.update(names)
                seen.discard(imported)  # reached with more names: follow its imports again
                todo.append(imported)
    return {module: reachable_names(module, names) for module, names in wanted.items() if names}


def _impl_imports(module: str, names: set[str] | None) -> dict[str, set[str]]:
    """The ``inboxspec.impl`` modules that ``module`` imports from, with the imported names; with
    ``names``, only the imports that those definitions of ``module`` reach."""
    package = module.rsplit(".", 1)[0]
    tree = ast.parse(_source(module))
    used = None if names is None else _names_reached(tree, names)
    imported: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            name = f"{package}.{node.module}" if node.level == 1 else node.module
            taken = {alias.name for alias in node.names
                     if used is None or (alias.asname or alias.name) in used}
            if name.startswith(IMPL_PACKAGE) and taken:
                imported.setdefault(name, set()).update(taken)
    return imported


def _top_level(tree: ast.Module) -> dict[str, ast.AST]:
    """A module's top-level functions, classes and assigned constants, by name."""
    found: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    found[target.id] = node
    return found


def _names_reached(tree: ast.Module, entries: set[str]) -> set[str]:
    """Every name that the top-level ``entries`` name, transitively through the module's own."""
    definitions = _top_level(tree)
    reached: set[str] = set()
    todo = list(entries)
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        if name in definitions:
            todo.extend(node.id for node in ast.walk(definitions[name]) if isinstance(node, ast.Name))
    return reached


def reachable_names(module: str, entries: set[str]) -> frozenset[str]:
    """The top-level definitions and constants of ``module`` that ``entries`` reach."""
    tree = ast.parse(_source(module))
    return frozenset(_names_reached(tree, entries) & set(_top_level(tree)))


def _source(module: str) -> str:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return Path(spec.origin).read_text(encoding="utf-8")


def reachable_definitions(module: str, entry: str) -> frozenset[str]:
    """The top-level functions and classes of ``module`` that ``entry`` names, transitively.

    In a driver module this is the encoding of the protocol (how a step becomes
    calls and the result becomes an output), and not what sits beside it there
    (the model session, the random generator) that no case runs on the reference.
    """
    tree = ast.parse(_source(module))
    definitions = {node.name: node for node in tree.body
                   if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    reached: set[str] = set()
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in reached or name not in definitions:
            continue
        reached.add(name)
        todo.extend(node.id for node in ast.walk(definitions[name]) if isinstance(node, ast.Name))
    return frozenset(reached)


def mutation_targets(machine: Any) -> list[Mutant]:
    """Every mutant of a machine's reference: its impl modules, and its driver's reachable part."""
    from inboxspec import machines

    modules = implementation_modules(machine)
    others = frozenset(module for other in machines.all_machines() if other.name != machine.name
                       for module in implementation_modules(other)) - set(modules)
    mutants = [m for module in modules for m in mutants_of(module)]
    mutants += [m for module, names in sorted(shared_modules(modules, others).items())
                for m in mutants_of(module, names)]
    driver = machine.run_case.__module__
    reached = reachable_definitions(driver, machine.run_case.__name__)
    return mutants + mutants_of(driver, reached)


def mutants_of(module: str, definitions: frozenset[str] | None = None) -> list[Mutant]:
    """The mutants of a module; with ``definitions``, only inside those top-level definitions."""
    return mutants_of_source(module, _source(module), definitions)


def mutants_of_source(module: str, source: str, definitions: frozenset[str] | None = None) -> list[Mutant]:
    """The mutants of ``source``, named as the module ``module``."""
    tree = ast.parse(source)
    skipped = _skipped_nodes(tree)
    scopes = _scopes(tree)
    contexts = _contexts(tree)
    seen: Counter[str] = Counter()
    found = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skipped:
            continue
        scope = scopes.get(id(node), "<module>")
        if definitions is not None and scope.split(".")[0] not in definitions:
            continue
        for operator, description in _operators(node):
            key = f"{module}:{scope}:{operator}:{_content_hash(node, operator, contexts.get(id(node)))}"
            found.append((getattr(node, "lineno", 0), getattr(node, "col_offset", 0), index,
                          key, operator, description))
    mutants = []
    # Ties are numbered in source order, not ast.walk order, so that what a reader sees
    # first is #1 and a new statement after them all leaves them alone.
    for line, _column, index, key, operator, description in sorted(found):
        seen[key] += 1
        mutant_id = key if seen[key] == 1 else f"{key}#{seen[key]}"
        mutants.append(Mutant(mutant_id, module, line, description, index, operator))
    return mutants


def mutated_source(mutant: Mutant) -> ast.Module:
    tree = ast.parse(_source(mutant.module))
    nodes = list(ast.walk(tree))
    target = nodes[mutant.node_index]
    replacement = _mutate_node(target, mutant.operator)
    if replacement is not target:
        for parent in nodes:
            for field, value in ast.iter_fields(parent):
                if value is target:
                    setattr(parent, field, replacement)
                elif isinstance(value, list):
                    for i, item in enumerate(value):
                        if item is target:
                            value[i] = replacement
    return ast.fix_missing_locations(tree)


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module from a mutated AST; every other import goes the usual way."""

    def __init__(self, name: str, tree: ast.Module, origin: str) -> None:
        self.name, self.tree, self.origin = name, tree, origin

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=self.origin)

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.__file__ = self.origin
        exec(compile(self.tree, self.origin, "exec"), module.__dict__)


HARNESS = "harness: "


class MutationHarnessError(RuntimeError):
    """The benchmark itself could not run a mutant (not a kill, not a survival)."""


def _cases_kill(machine_name: str, cases: Sequence[Any]) -> str | None:
    """In a fresh import of the mutated module and of what imports it: the first of ``cases``
    (loaded once by the parent: a case is data, untouched by any mutant) that fails, or None."""
    from inboxspec import machines
    from inboxspec.conformance.compare import first_difference

    if machine_name not in machines.REGISTRY:  # registered at run time, by a test say
        return HARNESS + f"{machine_name} is not in a fresh import of the registry"
    machine = machines.get(machine_name)
    for case in cases:
        try:
            actual = machine.run_case(case.config, case.inputs)
            difference = first_difference(case, actual)
        except Exception as error:  # a mutant may crash the reference: that is a kill
            return f"{case.id}: raised {type(error).__name__}"
        if difference is not None:
            return f"{case.id}: {difference.splitlines()[0]}"
    return None


def _imported_modules(name: str) -> set[str]:
    """The ``inboxspec`` modules one loaded module's source imports (anywhere in it)."""
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None)
    if origin is None or not origin.endswith(".py"):
        return set()
    package = name if origin.endswith("__init__.py") else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(Path(origin).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m in sys.modules}


def stale_modules(mutated: str) -> set[str]:
    """The modules a child must import afresh for ``mutated`` to take effect: the mutated
    module, every loaded ``inboxspec`` module that imports it directly or through another,
    and the registry package (``inboxspec.machines``), so that a fresh registry holds only
    the bundled machines. Every other module is shared with the parent as loaded, which
    saves each child importing the whole package again."""
    loaded = [m for m in sys.modules if m == "inboxspec" or m.startswith("inboxspec.")]
    imports = {m: _imported_modules(m) for m in loaded}
    stale = {mutated}
    grew = True
    while grew:
        grew = False
        for module, names in imports.items():
            if module not in stale and names & stale:
                stale.add(module)
                grew = True
    return stale | {"inboxspec.machines"}


def _bundled_cases(machine_name: str) -> list[Any]:
    """The machine's bundled cases, or none for a machine the registry does not hold (the child
    then reports it as a harness error)."""
    from inboxspec import machines
    from inboxspec.conformance.casefiles import load_cases

    return load_cases([machines.get(machine_name).cases]) if machine_name in machines.REGISTRY else []


@dataclass
class MutantChild:
    """A forked child replaying the cases through one mutant: its pid, the pipe it writes
    its verdict to, and the temporary directory it alone uses (removed when it is reaped,
    so a child killed at its timeout leaves no fixture directory behind)."""

    mutant: Mutant
    pid: int
    verdict: int
    tmpdir: str


def start_mutant(machine_name: str, mutant: Mutant, timeout: float,
                 cases: Sequence[Any] | None = None) -> MutantChild:
    """Fork a child that replays the machine's bundled cases through ``mutant``."""
    from inboxspec.checker.forked import take_default_termination

    tree = mutated_source(mutant)
    origin = str(importlib.util.find_spec(mutant.module).origin)  # type: ignore[union-attr]
    chosen = _bundled_cases(machine_name) if cases is None else cases
    stale = stale_modules(mutant.module)
    tmpdir = tempfile.mkdtemp(prefix="inboxspec-mutant-")
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.close(read)
        code = 0
        # os._exit skips the exit handlers: the child runs only those its fresh import registers
        # (the writer proofs' in-process fixture directories), never the parent's.
        atexit._clear()
        # The parent's handlers and masks (main's SIGTERM, run_mutants' mask) are not the child's:
        # a TERM or the child's own alarm ends it.
        take_default_termination(also=(signal.SIGALRM,))
        try:
            signal.alarm(max(1, int(timeout)))
            os.environ["TMPDIR"] = tmpdir
            tempfile.tempdir = tmpdir
            for name in stale:
                sys.modules.pop(name, None)
                # `from package import module` reads the package's attribute first: drop it too.
                parent, _, leaf = name.rpartition(".")
                if parent in sys.modules and parent not in stale and hasattr(sys.modules[parent], leaf):
                    delattr(sys.modules[parent], leaf)
            sys.meta_path.insert(0, _MutantFinder(mutant.module, tree, origin))
            reason = _cases_kill(machine_name, chosen)
            os.write(write, (reason or "").encode("utf-8", "replace")[:2000])
        except BaseException as error:  # the mutant broke the import itself
            os.write(write, f"import failed: {type(error).__name__}".encode())
            code = 1
        with contextlib.suppress(BaseException):  # a mutant may break its clean-up; the verdict is written
            atexit._run_exitfuncs()
        os._exit(code)
    os.close(write)
    return MutantChild(mutant, child, read, tmpdir)


def finish_mutant(child: MutantChild, status: int) -> str | None:
    """A reaped child's kill reason, or None when its mutant survived every bundled case.

    The verdict is at most 2,000 bytes, well under a pipe's buffer, so the child never
    blocks on writing it and the pipe can be read after the child is reaped.
    """
    chunks = []
    while chunk := os.read(child.verdict, 4096):
        chunks.append(chunk)
    os.close(child.verdict)
    shutil.rmtree(child.tmpdir, ignore_errors=True)
    if os.WIFSIGNALED(status):
        return f"timeout or signal {os.WTERMSIG(status)}"
    text = b"".join(chunks).decode("utf-8", "replace")
    if text.startswith(HARNESS):
        raise MutationHarnessError(text[len(HARNESS):])
    return text or None


def run_mutant(machine_name: str, mutant: Mutant, timeout: float) -> str | None:
    """The kill reason, or None when the mutant survives every bundled case."""
    child = start_mutant(machine_name, mutant, timeout)
    _, status = os.waitpid(child.pid, 0)
    return finish_mutant(child, status)


def run_mutants(machine_name: str, mutants: Sequence[Mutant], timeout: float, jobs: int,
                progress: bool = False) -> dict[str, str | None]:
    """Each mutant's kill reason (None: survived), ``jobs`` children at a time."""
    verdicts: dict[str, str | None] = {}
    running: dict[int, MutantChild] = {}
    cases = _bundled_cases(machine_name)
    waiting = list(reversed(mutants))
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                # A SIGTERM between a child's directory, its fork and its entry here would orphan
                # both: it is held off until the child is registered for the cleanup below.
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
                try:
                    child = start_mutant(machine_name, waiting.pop(), timeout, cases)
                    running[child.pid] = child
                finally:
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            pid, status = _first_ended(running)
            # Still listed while its verdict is read: an interrupt there leaves it to the cleanup below.
            verdicts[running[pid].mutant.id] = finish_mutant(running[pid], status)
            del running[pid]
            if progress:
                print(f"\r{len(verdicts)}/{len(mutants)} mutants", end="", file=sys.stderr, flush=True)
    finally:
        for child in running.values():  # an error or an interrupt: no child outlives the run
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):  # reaped already, its verdict not yet read
                os.waitpid(child.pid, 0)
            with contextlib.suppress(OSError):  # closed already, by finish_mutant
                os.close(child.verdict)
            shutil.rmtree(child.tmpdir, ignore_errors=True)
    if progress:
        print(file=sys.stderr)
    return verdicts


# How often ``_first_ended`` looks at the running children: a mutant takes a second or more.
POLL_SECONDS = 0.01


def _first_ended(running: Mapping[int, MutantChild]) -> tuple[int, int]:
    """The first of ``running`` found ended, reaped: (its pid, its wait status).

    Each child is asked by its own pid. A wait for any child (``waitpid(-1)``) would also reap
    a child some other part of the process started (a test's subprocess), whose owner would then
    never learn how it ended (``tests/test_mutation_score.py``); a pidfd per child would do, but
    only on Linux 5.3 and later."""
    while True:
        for pid in running:
            ended, status = os.waitpid(pid, os.WNOHANG)
            if ended:
                return pid, status
        time.sleep(POLL_SECONDS)


@dataclass
class Score:
    machine: str
    killed: list[tuple[Mutant, str]]
    survived: list[Mutant]
    equivalent: list[tuple[Mutant, str]]
    stale: list[str]
    seconds: float
    # Of the entries listed in the machine's equivalent-mutant file, how many, and how
    # many a second reviewer agreed with (see review_count).
    listed: int = 0
    reviewed: int = 0

    def as_json(self) -> dict[str, Any]:
        total = len(self.killed) + len(self.survived) + len(self.equivalent)
        return {"machine": self.machine, "mutants": total,
                "killed": len(self.killed), "survived": len(self.survived),
                "equivalent": len(self.equivalent),
                "survivors": [{"id": m.id, "line": m.line, "description": m.description}
                              for m in self.survived],
                "stale_equivalents": self.stale, "listed_equivalents": self.listed,
                "second_reviewed": self.reviewed, "seconds": round(self.seconds, 1)}


def _equivalent_entries(machine_name: str) -> list[dict[str, Any]]:
    path = EQUIVALENTS_DIR / f"{machine_name}.json"
    if not path.exists():
        return []
    entries: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["equivalent"]
    return entries


def load_equivalents(machine_name: str) -> dict[str, str]:
    """Each listed equivalent's id and reason; other keys of an entry are not read here."""
    return {entry["id"]: entry["reason"] for entry in _equivalent_entries(machine_name)}


def review_count(machine_name: str) -> tuple[int, int]:
    """(entries listed, entries with a second reviewer's agreement) in the machine's file.

    A second review is a text ``agreed`` or ``agreed: <note>``; anything else (missing,
    not a text, a disagreement) leaves the entry unreviewed.
    """
    entries = _equivalent_entries(machine_name)
    agreed = [e for e in entries if isinstance(e.get("second_review"), str)
              and (e["second_review"] == "agreed" or e["second_review"].startswith("agreed: "))]
    return len(entries), len(agreed)


def score(machine_name: str, timeout: float = 20.0, only: Sequence[str] = (),
          progress: bool = False, jobs: int = 1) -> Score:
    from inboxspec import machines

    began = time.monotonic()
    machine = machines.get(machine_name)
    equivalents = load_equivalents(machine_name)
    killed, survived, equivalent = [], [], []
    mutants = mutation_targets(machine)
    if only:
        mutants = [m for m in mutants if m.id in only]
    verdicts = run_mutants(machine_name, mutants, timeout, jobs, progress)
    for mutant in mutants:
        reason = verdicts[mutant.id]
        if reason is not None:
            killed.append((mutant, reason))
        elif mutant.id in equivalents:
            equivalent.append((mutant, equivalents[mutant.id]))
        else:
            survived.append(mutant)
    ids = {m.id for m in mutants}
    stale = [] if only else sorted(set(equivalents) - ids)
    # A listed "equivalent" that a case now kills is stale too: the list must not rot.
    stale += sorted(m.id for m, _ in killed if m.id in equivalents)
    listed, reviewed = review_count(machine_name)
    return Score(machine_name, killed, survived, equivalent, stale, time.monotonic() - began,
                 listed, reviewed)


def _source_line(mutant: Mutant) -> str:
    origin = importlib.util.find_spec(mutant.module).origin  # type: ignore[union-attr]
    lines = Path(str(origin)).read_text(encoding="utf-8").splitlines()
    return lines[mutant.line - 1].strip() if 0 < mutant.line <= len(lines) else ""


def _terminated(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("machines", nargs="*", help="machines to score (default: every registered one)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--only", action="append", default=[], metavar="ID", help="run only this mutant")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per mutant")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="mutants replayed at once, each in its own child (default: the cores)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    # A SIGTERM (a CI job cancelled, `kill`) unwinds like Ctrl-C, so run_mutants' cleanup kills the
    # children and removes their temporary directories. The caller's handler is put back on return:
    # a process that calls main (a test) and forks later must not hand its children this one.
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        return _run(args)
    finally:
        # None: a handler installed from C, which Python cannot put back; the default then.
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _run(args: argparse.Namespace) -> int:
    from inboxspec import machines

    names = args.machines or machines.names()
    if args.list:
        for name in names:
            for mutant in mutation_targets(machines.get(name)):
                print(f"{mutant.id}  (line {mutant.line}: {mutant.description})")
        return 0
    began = time.monotonic()
    scores = [score(name, args.timeout, args.only, progress=not args.json and sys.stderr.isatty(),
                    jobs=args.jobs)
              for name in names]
    seconds = time.monotonic() - began
    if args.json:
        print(json.dumps({"machines": [s.as_json() for s in scores], "jobs": args.jobs,
                          "seconds": round(seconds, 1)}, indent=2))
    for result in scores:
        if not args.json:
            total = len(result.killed) + len(result.survived) + len(result.equivalent)
            print(f"{result.machine}: {total} mutants: {len(result.killed)} killed, "
                  f"{len(result.survived)} survived, {len(result.equivalent)} equivalent "
                  f"({result.seconds:.0f}s)")
            if result.listed:
                print(f"  second review: {result.reviewed} of {result.listed} listed equivalents")
            for mutant in result.survived:
                print(f"  SURVIVED {mutant.id}  line {mutant.line} ({mutant.description}): "
                      f"{_source_line(mutant)}")
            for stale in result.stale:
                print(f"  STALE equivalent entry {stale}: no such surviving mutant; remove it")
    if not args.json:
        print(f"all: {sum(len(s.killed) for s in scores)} killed, {sum(len(s.survived) for s in scores)} "
              f"survived, {sum(len(s.equivalent) for s in scores)} equivalent in {seconds:.0f}s "
              f"with {args.jobs} job(s)")
    return 0 if all(not s.survived and not s.stale for s in scores) else 1


if __name__ == "__main__":
    raise SystemExit(main())
