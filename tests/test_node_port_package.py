"""`npm pack` of the Node port gives a package that installs into an empty directory, offline
(it has no runtime dependencies), exports the seeds' names, and whose adapter, run from the
install, passes every bundled case through `inboxspec conform`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.session_shared import computed_once, scratch_directory

ROOT = Path(__file__).resolve().parent.parent
PORT = ROOT / "conformance" / "ports" / "node"
NODE = shutil.which("node")
NPM = shutil.which("npm")

pytestmark = pytest.mark.slow

# Every constant and function seed 001 (peer-notices.d.ts) declares, seed 000's class and
# seed 002's two: the names a port author looks for in their own module.
SEED_NAMES = {
    # seed 001: the constants
    "PEER_HELD_QUEUE_CAP", "PEER_IDLE_SUBSCRIPTION_TTL_MS", "PEER_IDLE_SUBSCRIBER_TABLE_CAP",
    "PEER_IDLE_OUTSTANDING_CAP", "PEER_IDLE_PRIORS_KEPT", "PEER_IDLE_FIRE_DEBOUNCE_MS",
    "PEER_IDLE_HELD_BACKOFF_MS", "PEER_IDLE_LABEL_MAX", "CROSS_SESSION_DIALOG_EXPIRY_VALUES",
    "CROSS_SESSION_DIALOG_EXPIRY_DEFAULT", "PEER_HELD_REVIEW_CAUSES", "PEER_DELIVERY_RECEIPT_STATES",
    "PEER_DROP_REASONS", "PEER_IDLE_NOTICE_KINDS", "PEER_IDLE_UNAVAILABLE_CAUSES",
    # seed 001: the functions
    "resolveCrossSessionDialogExpiry", "isPeerDeliveryReceiptState", "peerRecipientSuffix",
    "renderCrossSessionDeliveryNotice", "describePeerDropReasons", "renderCrossSessionDroppedNotice",
    "isPeerIdleNoticeKind", "peerIdleNoticeLabel", "formatPeerNoticeClock", "renderCrossSessionIdleNotice",
    "describePeerIdleSubscription",
    # seeds 000 and 002
    "InboxWakePolicy", "defaultMaxInboxWakeStreak", "defaultScheduledSelfCadenceFloor",
    "PlacementWriterContextError", "InboxCache",
}


def tools() -> tuple[str, str]:
    if NODE is None or NPM is None:
        if os.environ.get("CI"):
            pytest.fail("node and npm are required in CI: the example port is packed and installed")
        pytest.skip("node or npm is not installed")
    return NODE, NPM


def npm(*args: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    # A cache of the test's own, so that nothing is written to the user's.
    env = {**os.environ, "npm_config_cache": str(cache), "npm_config_update_notifier": "false"}
    process = subprocess.run([tools()[1], *args], capture_output=True, text=True, cwd=cwd, env=env,
                             timeout=300)
    assert process.returncode == 0, process.stdout + process.stderr
    return process


def bundled_case_count() -> int:
    return sum(len(json.loads(path.read_text(encoding="utf-8"))["cases"])
               for path in (ROOT / "conformance" / "cases").rglob("*.json"))


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packed port, installed offline into an empty project, once in the session
    (tests/session_shared.py)."""
    tools()
    scratch = scratch_directory(tmp_path_factory, "node-port-package")
    return computed_once(tmp_path_factory, "node-port-package", lambda: _install(scratch))


def _install(scratch: Path) -> Path:
    cache = scratch / "npm-cache"
    packed: list[dict[str, Any]] = json.loads(
        npm("pack", "--json", "--pack-destination", str(scratch), cwd=PORT, cache=cache).stdout)
    files = {entry["path"] for entry in packed[0]["files"]}
    modules = {path.name for path in PORT.glob("*.mjs")}
    declarations = {f"types/{path.name}" for path in (PORT / "types").glob("*.d.mts")}
    # The interface data it loads (copies of spec/*.interface.json, kept current by `spec generate`).
    interface = {f"interface/{path.name}" for path in (PORT / "interface").glob("*.interface.json")}
    assert interface and modules | declarations | interface | {"package.json", "README.md"} == files, files
    consumer = scratch / "consumer"
    consumer.mkdir()
    manifest = {"name": "consumer", "private": True, "type": "module"}
    (consumer / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    npm("install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts",
        str(scratch / packed[0]["filename"]), cwd=consumer, cache=cache)
    package = consumer / "node_modules" / "inboxspec-node-example"
    assert (package / "adapter.mjs").is_file() and not (package / "node_modules").exists()
    return package


def test_the_installed_package_exports_the_seed_names(installed: Path) -> None:
    node, _ = tools()
    script = "import * as api from 'inboxspec-node-example'; console.log(JSON.stringify(Object.keys(api)));"
    process = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True,
                             cwd=installed.parent.parent, timeout=60)
    assert process.returncode == 0, process.stderr
    exported = set(json.loads(process.stdout))
    assert not SEED_NAMES - exported, sorted(SEED_NAMES - exported)
    manifest = json.loads((installed / "package.json").read_text(encoding="utf-8"))
    assert manifest["type"] == "module" and (installed / manifest["types"]).is_file()
    assert (installed / manifest["exports"]["."]["types"]).is_file()


def test_the_installed_adapter_passes_every_bundled_case(installed: Path) -> None:
    node, _ = tools()
    adapter = f"{node} {installed / 'adapter.mjs'}"
    process = subprocess.run([sys.executable, "-m", "inboxspec", "conform", "--json", "--adapter", adapter],
                             capture_output=True, text=True, timeout=600, cwd=installed.parent.parent)
    assert process.returncode == 0, process.stdout[-2000:] + process.stderr
    report = json.loads(process.stdout)
    assert len(report["results"]) == bundled_case_count()
    assert report["totals"]["pass"] == len(report["results"]) and report["totals"]["skip"] == 0
    manifest = json.loads((installed / "package.json").read_text(encoding="utf-8"))
    assert report["implementation"]["name"] == manifest["name"] == "inboxspec-node-example"
    assert report["implementation"]["version"] == manifest["version"]
