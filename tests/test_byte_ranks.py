"""rust/src/core/line_search/rank.rs is what scripts/byte_ranks.py generates, by its rule."""

from __future__ import annotations

import importlib.util
import math
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "byte_ranks.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("byte_ranks", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


byte_ranks = _load_script()


def _corpus_readable() -> bool:
    try:
        byte_ranks.corpus_blobs()
    except byte_ranks.CorpusUnavailable:
        return False
    return True


needs_corpus = pytest.mark.skipif(
    not _corpus_readable(),
    reason=f"git history without the corpus commit {byte_ranks.CORPUS_COMMIT[:12]}",
)


def _table(text: str) -> list[int]:
    body = text.split("pub(super) const RANK: [u8; 256] = [", 1)[1].split("];", 1)[0]
    return [int(value) for value in re.findall(r"\d+", body)]


@needs_corpus
def test_check_mode_passes() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


@needs_corpus
def test_committed_table_is_the_generated_one() -> None:
    assert byte_ranks.TARGET.read_text(encoding="utf-8") == byte_ranks.generate()


def test_check_mode_reports_a_hand_edited_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "rank.rs"
    monkeypatch.setattr(byte_ranks, "TARGET", target)
    monkeypatch.setattr(byte_ranks, "ROOT", tmp_path)
    monkeypatch.setattr(byte_ranks, "generate", lambda: "generated\n")
    assert byte_ranks.main(["--check"]) == 1
    assert byte_ranks.main([]) == 0
    assert target.read_text(encoding="utf-8") == "generated\n"
    assert byte_ranks.main(["--check"]) == 0
    target.write_text("generated, then edited\n", encoding="utf-8")
    assert byte_ranks.main(["--check"]) == 1


def test_ranks_follow_the_rule() -> None:
    counts = [0] * 256
    counts[ord(" ")], counts[ord("\t")], counts[ord("e")], counts[ord("x")] = 900, 100, 500, 9
    counts[0xE2] = 1
    table = byte_ranks.ranks(counts)
    assert table[ord(" ")] == table[ord("\t")] == 255  # a tab counts as a space
    assert table[ord("e")] == round(255 * math.log1p(500) / math.log1p(1000))
    assert 0 < table[0xE2] < table[ord("x")] < table[ord("e")] < 255
    assert table[ord("q")] == 0  # never seen


def test_committed_table_shape() -> None:
    text = byte_ranks.TARGET.read_text(encoding="utf-8")
    table = _table(text)
    assert len(table) == 256 and all(0 <= rank <= 255 for rank in table)
    assert table[ord(" ")] == 255
    assert "#[rustfmt::skip]" in text and "python scripts/byte_ranks.py" in text
    assert "memchr" not in text.lower()
