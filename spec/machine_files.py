"""A machine's files at a glance: the generated ``<machine>-files`` section that ends its spec.

One line per file, in a fixed order of roles (model, reference, explorer
description, driver, interface data, cases, Node module, tests, benchmarks),
each found from the registry entry and the layout ``docs/adding-a-machine.md``
prescribes, so that a newcomer who must change a machine sees every file the
change may reach, and the list cannot go stale (``inboxspec spec generate
--check``).

The reference's modules are the ``inboxspec.impl`` modules that the driver
imports, followed through the imports among ``impl/`` modules; the model's
are found the same way from the chart's module. Tests and
benchmarks are found by name: a test or benchmark file of the machine has its
snake-case name in its file name. They exist only in a checkout of the
repository, so an installed package (where ``tests/`` is absent) keeps the
section as it was written (:func:`in_checkout`).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from inboxspec.machines.frame import Machine

IMPL_PACKAGE = "inboxspec.impl"
MODEL_PACKAGE = "inboxspec.model"


def checkout_of(entry: Machine) -> Path:
    """The folder that holds ``spec/``, ``impl/``, ``conformance/`` ... for this machine."""
    return entry.spec.parent.parent


def in_checkout(entry: Machine) -> bool:
    """Whether the machine's files sit in a repository checkout (with ``tests/``), not an install."""
    return (checkout_of(entry) / "tests").is_dir()


def _module_file(module_name: str) -> Path:
    module = sys.modules.get(module_name)
    if module is None:
        __import__(module_name)
        module = sys.modules[module_name]
    assert module.__file__ is not None, module_name
    return Path(module.__file__).resolve()


def _imports_within(path: Path, package: str) -> list[str]:
    """The modules of ``package`` (``inboxspec.impl``, say) that one source file imports, in
    source order; a relative import counts when the file is itself one of the package's."""
    inside = _module_file(package).parent == path.parent
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and inside:
            if node.module is None:
                found.extend(f"{package}.{alias.name}" for alias in node.names)
            else:
                found.append(f"{package}.{node.module}")
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            if node.module == package:
                found.extend(f"{package}.{alias.name}" for alias in node.names)
            elif node.module.startswith(package + "."):
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names if alias.name.startswith(package + "."))
    return found


def modules_within(package: str, folder: str, start: Path, entry: Machine) -> list[Path]:
    """The modules of ``package`` that ``start`` imports, those of its ``folder`` named after
    the machine (a worker the driver does not import, say), and every module of the package
    they import in turn, sorted."""
    snake = entry.name.replace("-", "_")
    named = sorted((checkout_of(entry) / folder).glob(f"{snake}*.py"))
    pending = [*_imports_within(start, package), *(f"{package}.{path.stem}" for path in named)]
    seen: dict[str, Path] = {}
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen[name] = _module_file(name)
        pending.extend(_imports_within(seen[name], package))
    return sorted(seen.values())


def files(entry: Machine) -> list[tuple[str, Path]]:
    """(role, path) for every file of the machine, paths absolute."""
    root = checkout_of(entry)
    snake = entry.name.replace("-", "_")
    driver = _module_file(entry.run_case.__module__)
    chart = _module_file(entry.chart.__module__)
    listed: list[tuple[str, Path]] = [("spec", entry.spec)]
    listed += [("spec", path) for path in sorted(entry.spec.parent.glob(f"{entry.name}-*.md"))]
    listed += [("model", path) for path in modules_within(MODEL_PACKAGE, "model", chart, entry)]
    listed += [("reference", path) for path in modules_within(IMPL_PACKAGE, "impl", driver, entry)]
    listed += [
        ("explorer description and registry entry", root / "machines" / f"{snake}.py"),
        ("case driver", driver),
    ]
    if entry.interface is not None:
        listed.append(("interface data", entry.spec.with_name(f"{entry.name}.interface.json")))
    listed += [
        ("cases", entry.cases),
        ("exploration manifest", entry.manifest),
        ("Node port module", root / "conformance" / "ports" / "node" / f"{entry.name}.mjs"),
    ]
    listed += [("test", path) for path in sorted((root / "tests").glob(f"*{snake}*.py"))]
    listed += [("benchmark", path) for path in sorted((root / "benchmarks").glob(f"*{snake}*.py"))]
    mutants = root / "benchmarks" / "equivalent-mutants" / f"{entry.name}.json"
    if mutants.is_file():
        listed.append(("equivalent mutants", mutants))
    return listed


def section(entry: Machine) -> str:
    """The Markdown list, paths relative to the repository root."""
    root = checkout_of(entry)
    lines = []
    for role, path in files(entry):
        relative = path.relative_to(root).as_posix()
        if path.is_dir():
            count = sum(1 for _ in path.rglob("*.json"))
            lines.append(f"- {role}: `{relative}/` ({count} case files)")
        else:
            lines.append(f"- {role}: `{relative}`")
    return "\n".join(lines) + "\n"
