"""Measurement cost of one writer install at 10, 1 000 and 10 000 files (spec/writer-proofs.md).

Builds a real install per size in a temporary directory (files spread over 100 directories),
measures it a few times with the reference's filesystem edge, and prints the best time, the time
per file, and the growth from one size to the next: linear cost shows a steady time per file.
No thresholds: the numbers are for reading.

    .venv/bin/python benchmarks/writer_proofs_measurement.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from inboxspec.impl.writer_fs import measure_root

SIZES = (10, 1_000, 10_000)


def build(root: Path, files: int) -> None:
    (root / "bin").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "package.json").write_text(json.dumps({"name": "@staix/agent-mem", "version": "0.22.0"}))
    (root / "bin" / "amem.js").write_text("#!/usr/bin/env node\n")
    (root / "src" / "index.ts").write_text("export {};\n")
    for index in range(files - 3):
        folder = root / "src" / f"m{index % 100:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{index}.ts").write_text(f"export const v{index} = {index};\n" * 4)
    for path in root.rglob("*"):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    os.chmod(root, 0o755)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'files':>7}  {'best ms':>9}  {'µs/file':>8}  {'growth':>7}")
    previous: tuple[int, float] | None = None
    with tempfile.TemporaryDirectory() as scratch:
        for files in SIZES:
            root = Path(scratch, f"w{files}")
            build(root, files)
            best = float("inf")
            for _ in range(args.repeat):
                began = time.perf_counter()
                measure_root(str(root))
                best = min(best, time.perf_counter() - began)
            growth = "" if previous is None else f"{best / previous[1]:.1f}x/{files // previous[0]}x"
            print(f"{files:>7}  {best * 1000:>9.2f}  {best / files * 1e6:>8.1f}  {growth:>7}")
            previous = (files, best)


if __name__ == "__main__":
    main()
