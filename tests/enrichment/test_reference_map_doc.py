"""docs/reference-map-vcore.md is what the bundled Vcore reference map says."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from viano_bug_analysis.enrichment import vcore_profile

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "reference_map_doc.py"
PAGE = REPO / "docs" / "reference-map-vcore.md"


def test_the_page_is_generated_from_the_map_as_it_is() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout


def test_the_page_names_every_entry_and_its_table() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for ref in vcore_profile().references:
        assert f"| `{ref.name}` | `{ref.column}` |" in page
        assert f"### `{ref.table}`" in page


def test_a_stale_page_is_reported(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("reference_map_doc", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = tmp_path / "reference-map-vcore.md"
    page.write_text("old\n", encoding="utf-8")
    setattr(module, "PAGE", page)  # noqa: B010 - a module loaded from a path, untyped
    setattr(module, "ROOT", tmp_path)  # noqa: B010
    assert module.main(["--check"]) == 1
    assert module.main([]) == 0
    assert module.main(["--check"]) == 0
