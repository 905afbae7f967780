"""Side-by-side ratios of a benchmark module: each role's median against ``ours``.

A module keeps one ``Ratios`` and calls ``record`` after each benchmark; its
autouse fixture ``ratios.report`` prints one line per baseline at the end of
the module and each ``ours`` benchmark stores its ratios in ``extra_info``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


class Ratios:
    def __init__(self) -> None:
        # group -> {role: median seconds}
        self.medians: dict[str, dict[str, float]] = {}

    def record(self, benchmark: Any, group: str, role: str) -> None:
        if benchmark.stats is None:  # --benchmark-disable
            return
        median = benchmark.stats.stats.median
        self.medians.setdefault(group, {})[role] = median
        benchmark.extra_info["role"] = role
        for other, value in self.medians[group].items():
            if other != role:
                benchmark.extra_info[f"ratio_vs_{other}"] = (
                    value / median if role == "ours" else median / value
                )

    def lines(self) -> list[str]:
        return [
            f"{group}: {role} {median * 1e3:.2f} ms / ours {medians['ours'] * 1e3:.2f} ms"
            f" = {median / medians['ours']:.1f}x"
            for group, medians in self.medians.items()
            if "ours" in medians
            for role, median in medians.items()
            if role != "ours"
        ]

    def report(self, request: pytest.FixtureRequest) -> Iterator[None]:
        """The body of a module-scoped autouse fixture: prints the ratios at the end."""
        yield
        plugins = request.config.pluginmanager
        reporter = plugins.get_plugin("terminalreporter")
        capture = plugins.get_plugin("capturemanager")
        lines = self.lines()
        if reporter is None or capture is None or not lines:
            return
        with capture.global_and_fixture_disabled():
            reporter.write_line("")
            for line in lines:
                reporter.write_line(f"ratio  {line}")
