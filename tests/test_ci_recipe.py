"""docs/ci.md's commands, run as written against the Node port.

One definition: the commands are read from the document's marked block, and
the only change is the adapter command. pip finds inboxspec as the document
tells a project to before a release: a wheel of this tree in PIP_FIND_LINKS.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import junitparser
import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ci.md"
MARKER = "<!-- ci-recipe:"
NODE_PORT = ROOT / "conformance" / "ports" / "node"
ADAPTER = re.compile(r'--adapter "([^"]*)"')


def recipe() -> list[str]:
    """The commands of the block right after the marker, one a line."""
    text = DOC.read_text(encoding="utf-8")
    assert text.count(MARKER) == 1
    block = re.search(r"```sh\n(.*?)```", text[text.index(MARKER):], re.DOTALL)
    assert block is not None
    return [line for line in block[1].splitlines() if line.strip()]


def with_adapter(commands: list[str], adapter: str) -> list[str]:
    """The commands with the adapter command replaced, and nothing else."""
    replaced = [ADAPTER.sub(lambda _: f"--adapter {shlex.quote(adapter)}", line) for line in commands]
    assert sum(a != b for a, b in zip(commands, replaced, strict=True)) == 1
    return replaced


def test_the_recipe_runs_conform_with_junit_json_and_require() -> None:
    commands = recipe()
    (conform,) = [line for line in commands if " conform " in line]
    words = shlex.split(conform)
    assert {"--junit", "--json", "--require", "--adapter"} <= set(words)
    assert any("pip install inboxspec" in line for line in commands)


def run(commands: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = "set -eu\n" + "\n".join(commands) + "\n"
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_the_ci_recipe_passes_the_node_port_and_fails_a_broken_copy(tmp_path: Path,
                                                                     wheel_of_this_tree: Path) -> None:
    env = {**os.environ, "PIP_FIND_LINKS": str(wheel_of_this_tree.parent)}
    env.pop("VIRTUAL_ENV", None)
    project = tmp_path / "host-project"
    project.mkdir()
    commands = with_adapter(recipe(), f"node {NODE_PORT / 'adapter.mjs'}")
    done = run(commands, project, env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    conform = next(line for line in recipe() if " conform " in line)  # as written, to substitute again
    words = shlex.split(conform)
    junit_file = project / words[words.index("--junit") + 1]
    report = json.loads((project / words[words.index(">") + 1]).read_text(encoding="utf-8"))
    required = [words[i + 1] for i, word in enumerate(words) if word == "--require"]
    assert report["ok"] is True and required
    assert all(report["machines"][machine]["executed"] > 0 for machine in required)
    document = junitparser.JUnitXml.fromfile(str(junit_file))
    assert document.tests == len(report["results"]) and document.failures == document.errors == 0

    # Exit 1: the same conform command against a port with one wrong character.
    broken = tmp_path / "broken-port"
    shutil.copytree(NODE_PORT, broken)
    (holder,) = [p for p in broken.rglob("*.mjs") if "ingress guard" in p.read_text(encoding="utf-8")]
    holder.write_text(holder.read_text(encoding="utf-8").replace("ingress guard", "ingress guarf"),
                      encoding="utf-8")
    failing = run(with_adapter([conform], f"node {broken / 'adapter.mjs'}"), project, env)
    assert failing.returncode == 1
    assert json.loads((project / words[words.index(">") + 1]).read_text(encoding="utf-8"))["ok"] is False
    assert junitparser.JUnitXml.fromfile(str(junit_file)).failures > 0

    # Exit 2: an adapter that does not start; both files still say why.
    unusable = run(with_adapter([conform], str(tmp_path / "no-such-adapter")), project, env)
    assert unusable.returncode == 2
    assert "unusable" in json.loads((project / words[words.index(">") + 1]).read_text(encoding="utf-8"))
    assert junitparser.JUnitXml.fromfile(str(junit_file)).errors == 1
