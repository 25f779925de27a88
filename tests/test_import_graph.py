"""The folders import each other in one direction only.

    impl, model  <-  machines  <-  spec  <-  conformance  <-  checker  <-  cli (the root package)

``impl`` and ``model`` are two independent descriptions of each machine and
never import each other (the lockstep tests compare them). Every other folder
may import only the folders to its left. The graph is read from the source
with ``ast``, the way a static tool reads it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# folder -> the subpackage it is installed as (cli/ is the root package itself)
FOLDERS = {"impl": "impl", "model": "model", "machines": "machines", "spec": "spec",
           "conformance": "conformance", "checker": "checker", "cli": ""}
ALLOWED = {
    "impl": set(),
    "model": set(),
    "machines": {"impl", "model"},
    "spec": {"impl", "model", "machines"},
    "conformance": {"impl", "model", "machines", "spec"},
    "checker": {"impl", "model", "machines", "spec", "conformance"},
    "cli": {"impl", "model", "machines", "spec", "conformance", "checker"},
}


def imported_folders(path: Path) -> set[str]:
    """The folders a module imports (including imports inside functions)."""
    modules: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module == "inboxspec" and node.level == 0:
            # `from inboxspec import machines` names a folder; `... import __version__` the root.
            modules += [f"inboxspec.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.append(node.module)
    found: set[str] = set()
    for module in modules:
        parts = module.split(".")
        if parts[0] == "inboxspec":
            found.add(parts[1] if len(parts) > 1 and parts[1] in FOLDERS else "cli")
    return found


def test_folders_import_only_to_their_left() -> None:
    problems = []
    for folder, allowed in ALLOWED.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            extra = imported_folders(path) - allowed - {folder}
            problems += [f"{path.relative_to(ROOT)} imports inboxspec.{e or '(root)'}" for e in sorted(extra)]
    assert problems == []


def test_the_reader_sees_imports() -> None:
    # The rule above is only as good as the reader: it must see both spellings.
    assert {"machines", "conformance"} <= imported_folders(ROOT / "checker" / "refine.py")
    assert "cli" in imported_folders(ROOT / "cli" / "__main__.py")  # `from inboxspec.cli import main`
