"""Run every benchmark in this folder and print its ratio against the baseline users would pick.

    make bench            # or: python benchmarks/run.py [name ...]

Each ``bench_*.py`` or ``*_bench.py`` exposes ``run() -> list[dict]`` rows with ``case``,
``ours_s``, ``baseline``, ``baseline_s`` and ``ratio`` (baseline time / our time: above 1 means
faster).
Timings are medians of repeated runs on this machine, measured in the same process.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).parent


def main(names: list[str]) -> int:
    table = Table(title="rewardkit benchmarks (ratio = baseline time / rewardkit time)")
    for col in ("benchmark", "case", "rewardkit [ms]", "baseline", "baseline [ms]", "ratio"):
        table.add_column(col)
    paths = sorted(set(HERE.glob("bench_*.py")) | set(HERE.glob("*_bench.py")))
    for path in paths:
        short = path.stem.removeprefix("bench_").removesuffix("_bench")
        if names and short not in names:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for row in mod.run():
            table.add_row(
                path.stem,
                row["case"],
                f"{row['ours_s'] * 1e3:.2f}",
                row["baseline"],
                f"{row['baseline_s'] * 1e3:.2f}",
                f"{row['ratio']:.2f}x" if row["ratio"] < 1 else f"{row['ratio']:.1f}x",
            )
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
