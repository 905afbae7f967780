"""Turns a pytest-benchmark JSON file into the results table of docs/benchmarks.md.

Each group is printed side by side with its ratios. The reference row of a
group is the benchmark whose ``extra_info["role"]`` is ``"reference"`` (or,
failing that, the first one whose name contains ``baseline``); every other row
shows ``reference median / row median`` as "speed vs reference" and the plain
``row median / reference median`` as "time vs reference".

Usage: python scripts/bench_report.py BENCH.json docs/benchmarks.md
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

START = "<!-- bench:start -->"
END = "<!-- bench:end -->"


def render(data: dict) -> str:
    groups: dict[str, list[dict]] = {}
    for bench in data["benchmarks"]:
        groups.setdefault(bench["group"] or "ungrouped", []).append(bench)
    machine = data.get("machine_info", {})
    cpu = machine.get("cpu", {}).get("brand_raw", "?")
    lines = [
        f"Measured {data.get('datetime', '?')[:19]} on {cpu}"
        f" ({machine.get('cpu', {}).get('count', '?')} cores), Python {platform.python_version()}.",
        "",
    ]
    for group, benches in sorted(groups.items()):
        reference = next(
            (b for b in benches if b.get("extra_info", {}).get("role") == "reference"),
            next((b for b in benches if "baseline" in b["name"]), benches[0]),
        )
        ref_median = reference["stats"]["median"]
        lines += [f"### {group}", "", "| benchmark | median | time vs reference | rounds |"]
        lines.append("|---|---:|---:|---:|")
        for bench in sorted(benches, key=lambda b: b["stats"]["median"]):
            median = bench["stats"]["median"]
            name = bench["name"].removeprefix("test_")
            marker = " (reference)" if bench is reference else ""
            lines.append(
                f"| {name}{marker} | {median * 1000:.2f} ms | {median / ref_median:.2f}x"
                f" | {bench['stats']['rounds']} |"
            )
        for bench in benches:
            figures = bench.get("extra_info", {}).get("figures")
            if figures:
                name = bench["name"].removeprefix("test_")
                shown = ", ".join(f"{key} {value}" for key, value in figures.items())
                lines += ["", f"{name}: {shown}"]
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    table = render(json.loads(source.read_text()))
    doc = target.read_text()
    head, _, rest = doc.partition(START)
    _, _, tail = rest.partition(END)
    target.write_text(f"{head}{START}\n{table}\n{END}{tail}")


if __name__ == "__main__":
    main()
