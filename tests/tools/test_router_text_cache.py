"""``InvestigationToolRouter.cache_source_texts``: decoded sources kept between batches.

The cache may skip reading a member again only after the member's attachment
verified against the manifest in this batch: a changed attachment is refused
as before, cached text or not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tools.package_factory import BuiltPackage, build_package
from viano_bug_analysis.snapshot import SnapshotArchive
from viano_bug_analysis.tools import ToolError
from viano_bug_analysis.tools.router import InvestigationToolRouter

SOURCES = {
    "src/a.cpp": b"void A() { KilledMonsterCredit(1); }\n" * 20,
    "src/b.cpp": b"void B() { KilledMonsterCredit(2); }\n" * 20,
}


@pytest.fixture
def package(tmp_path: Path) -> BuiltPackage:
    return build_package(tmp_path, sources=SOURCES)


def batch(package: BuiltPackage) -> dict[str, Any]:
    return package.request(
        {
            "operation": "source.find_text",
            "arguments": {
                "source_refs": sorted(package.refs.values()),
                "text": "KilledMonsterCredit",
                "case_sensitive": True,
                "offset": 0,
                "limit": 5,
            },
        }
    )


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    reads: list[int] = []
    original = SnapshotArchive.read_texts

    def counting(self: SnapshotArchive, members: Any, **kwargs: Any) -> Any:
        reads.append(len(members))
        return original(self, members, **kwargs)

    monkeypatch.setattr(SnapshotArchive, "read_texts", counting)
    return reads


def test_cached_texts_answer_as_fresh_reads(
    package: BuiltPackage, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = InvestigationToolRouter().query(package.path, batch(package))
    reads = count_reads(monkeypatch)
    router = InvestigationToolRouter()
    router.cache_source_texts(1 << 20)
    assert router.query(package.path, batch(package)) == expected
    assert router.query(package.path, batch(package)) == expected
    assert reads == [2]  # the second batch read no member


def test_without_the_cache_every_batch_reads(
    package: BuiltPackage, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = count_reads(monkeypatch)
    router = InvestigationToolRouter()
    router.query(package.path, batch(package))
    router.query(package.path, batch(package))
    assert reads == [2, 2]


def test_a_changed_attachment_is_refused_despite_cached_texts(package: BuiltPackage) -> None:
    router = InvestigationToolRouter()
    router.cache_source_texts(1 << 20)
    router.query(package.path, batch(package))
    attachment = next((package.path / "attachments").iterdir())
    data = bytearray(attachment.read_bytes())
    data[-1] ^= 0xFF  # same size, other bytes
    attachment.chmod(0o644)
    attachment.write_bytes(bytes(data))
    with pytest.raises(ToolError) as caught:
        router.query(package.path, batch(package))
    assert caught.value.code == "attachment_mismatch"


def test_the_cache_keeps_at_most_its_bytes(
    package: BuiltPackage, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = count_reads(monkeypatch)
    router = InvestigationToolRouter()
    router.cache_source_texts(len(SOURCES["src/a.cpp"]))  # room for one member
    router.query(package.path, batch(package))
    router.query(package.path, batch(package))
    assert reads == [2, 1]
