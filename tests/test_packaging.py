"""The wheel carries every data file the installed commands read.

`inboxspec check` after a plain `pip install .` reads the spec, the cases and
the protocol schemas from the installed package, so a package-data glob that
misses a folder breaks the README's main job while an editable install hides it.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from inboxspec import __version__
from inboxspec.conformance.adapter import handle

ROOT = Path(__file__).resolve().parent.parent
DATA_FOLDERS = {"spec": "inboxspec/spec", "conformance": "inboxspec/conformance"}
# The Node port's files are package data too: .mjs modules, its package.json and lock, its
# tsconfig files, the declarations (types/*.d.mts) and the type-level test (.ts).
DATA_SUFFIXES = {".json", ".md", ".mjs", ".mts", ".ts"}


@pytest.mark.slow
def test_wheel_ships_every_data_file(wheel_of_this_tree: Path) -> None:
    # Built from a copy of the tracked files (tests/conftest.py).
    shipped = set(zipfile.ZipFile(wheel_of_this_tree).namelist())
    tracked = subprocess.run(["git", "ls-files", *DATA_FOLDERS], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    expected = {
        DATA_FOLDERS[path.split("/", 1)[0]] + "/" + path.split("/", 1)[1]
        for path in tracked
        if Path(path).suffix in DATA_SUFFIXES
    }
    assert expected and not expected - shipped, sorted(expected - shipped)
    # One import namespace: nothing but inboxspec/ and the wheel's metadata at the top.
    tops = {name.split("/", 1)[0] for name in shipped}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"inboxspec"}


@pytest.mark.slow
def test_the_wheels_version_is_the_packages(wheel_of_this_tree: Path) -> None:
    """One definition: the distribution's version is the package's (``conformance/version.py``, which
    ``inboxspec --version`` shows as ``inboxspec.__version__``), read by pyproject.toml instead of
    stating one of its own."""
    archive = zipfile.ZipFile(wheel_of_this_tree)
    (metadata,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
    versions = [line.split(":", 1)[1].strip() for line in archive.read(metadata).decode().splitlines()
                if line.startswith("Version:")]
    assert versions == [__version__]


def test_the_reference_adapter_reports_the_packages_version() -> None:
    """One definition (conformance/version.py): the adapter's start reply, ``inboxspec --version``
    and the installed distribution's metadata name one version."""
    reply = handle({"cmd": "start", "version": 1})
    assert reply is not None and reply["implementation"]["version"] == __version__
    assert importlib.metadata.version("inboxspec") == __version__


def test_the_ci_guide_pins_the_packages_version() -> None:
    """docs/ci.md tells a project to pin the release it tested: the pin it shows is this version."""
    pins = re.findall(r"inboxspec==([^`\s]+)", (ROOT / "docs" / "ci.md").read_text(encoding="utf-8"))
    assert pins == [__version__]


def test_no_top_level_folder_shadows_the_installed_package() -> None:
    """`python -m inboxspec...` run from the repository puts it first on sys.path; a
    folder named `inboxspec` there would hide the installed package's mapped
    subpackages (inboxspec.impl, inboxspec.conformance, ...)."""
    assert not (ROOT / "inboxspec").exists()
