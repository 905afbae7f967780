"""Type stubs of the private native extension (kept honest by mypy.stubtest in `make lint`)."""

import os
from typing import final

__all__ = [
    "ClientTable",
    "GitRepository",
    "GitSelection",
    "GitTree",
    "RowSnapshot",
    "SourceText",
    "ZipArchive",
    "__version__",
    "git_path_problem",
    "is_identifier",
    "search_lines",
    "sha256_implementation",
]

__version__: str

def sha256_implementation() -> str:
    """Which SHA-256 implementation runs on this CPU ("sha-ni" or "software")."""

def is_identifier(name: str) -> bool: ...
def git_path_problem(path: str, *, allow_trailing_slash: bool = False) -> str | None: ...
def search_lines(
    texts: list[SourceText],
    queries: list[tuple[str, str, int, int]],
    *,
    max_chars: int,
    threads: int = 0,
) -> list[tuple[int, list[int], list[tuple[int, int, str, bool]]]]: ...

@final
class SourceText:
    @staticmethod
    def decode(data: bytes) -> SourceText: ...
    @property
    def line_count(self) -> int: ...
    @property
    def had_bom(self) -> bool: ...
    @property
    def is_ascii(self) -> bool: ...
    def lines(self, first: int, last: int, max_chars: int) -> list[tuple[int, str, bool]]: ...

@final
class ZipArchive:
    def __new__(cls, path: str | os.PathLike[str]) -> ZipArchive: ...
    def entries(self) -> list[dict[str, object]]: ...
    def verify(self, name: str, *, sha256: str, size: int, max_bytes: int) -> None: ...
    def read_bytes(self, name: str, *, sha256: str, size: int, max_bytes: int) -> bytes: ...
    def read_text(self, name: str, *, sha256: str, size: int, max_bytes: int) -> SourceText: ...
    def read_texts(
        self, members: list[tuple[str, str, int]], *, max_bytes: int, threads: int = 0
    ) -> list[SourceText]: ...

@final
class RowSnapshot:
    @staticmethod
    def parse(data: bytes) -> RowSnapshot: ...
    @property
    def kind(self) -> str: ...
    @property
    def row_count(self) -> int: ...
    @property
    def has_rows(self) -> bool: ...
    @property
    def header_json(self) -> bytes | None: ...
    def columns(self) -> list[str]: ...
    def has_column(self, name: str) -> bool: ...
    def lookup(
        self,
        filters: list[tuple[str, object]],
        *,
        columns: list[str] | None,
        offset: int,
        limit: int,
    ) -> tuple[int, list[tuple[int, dict[str, object]]]]: ...
    def find_references(
        self,
        value: object,
        search_columns: list[str],
        *,
        columns: list[str] | None,
        offset: int,
        limit: int,
    ) -> tuple[int, list[tuple[int, list[str], dict[str, object]]]]: ...

@final
class GitRepository:
    def __new__(
        cls,
        path: str | os.PathLike[str],
        *,
        cache_bytes: int,
        disk_cache: str | os.PathLike[str] | None = None,
        disk_cache_bytes: int = 0,
    ) -> GitRepository: ...
    def tree(self, commit: str, *, max_entries: int, timeout_s: float) -> GitTree: ...
    def resolve_revision(self, revision: str, *, max_listed: int) -> tuple[list[str], int, int]: ...
    def relate(
        self, reported: str, pinned: str, *, max_commits: int, timeout_s: float
    ) -> tuple[str, int | None, int | None, list[str], int, str | None]: ...
    def changes(
        self,
        since: str,
        pinned: str,
        terms: list[str],
        *,
        prefix: str | None,
        max_walk_commits: int,
        max_commits: int,
        max_blobs: int,
        max_file_bytes: int,
        max_changes: int,
        max_chars: int,
        timeout_s: float,
    ) -> tuple[
        str,
        str | None,
        int,
        int,
        int,
        str | None,
        int,
        list[
            tuple[
                str,
                int,
                str | None,
                int,
                list[tuple[str | bytes, str, int, str, bool, str, int]],
            ]
        ],
        list[tuple[str | bytes, str]],
    ]: ...
    def first_parent_log(
        self,
        start: str,
        *,
        max_commits: int,
        max_files: int,
        max_message_bytes: int,
        timeout_s: float,
    ) -> tuple[
        list[
            tuple[
                str,
                list[str],
                str,
                str,
                int,
                int,
                str,
                bool,
                int,
                list[tuple[str | bytes, str, str | None, str | None]],
            ]
        ],
        bool,
        int,
    ]: ...
    def sha256(self, blob_ids: list[str], *, timeout_s: float) -> list[str]: ...
    def flush(self) -> None: ...
    def disk_cache_info(self) -> tuple[int, int, int, int] | None: ...
    def cache_info(self) -> tuple[int, int, int]: ...

@final
class GitTree:
    def __len__(self) -> int: ...
    @property
    def absent(self) -> int: ...
    def refreshed(self) -> GitTree: ...
    def entry(self, path: str) -> tuple[str | bytes, str, str, int, str | None] | None: ...
    def find_paths(
        self, *, contains: str, prefix: str | None
    ) -> list[tuple[str | bytes, str, str, int, str | None]]: ...
    def select(
        self, *, prefix: str | None, sql_only: bool, max_file_bytes: int
    ) -> GitSelection: ...
    def text(self, path: str, *, max_bytes: int, timeout_s: float) -> SourceText | str: ...

@final
class GitSelection:
    @property
    def file_count(self) -> int: ...
    @property
    def total_bytes(self) -> int: ...
    def inflate_floor(self, *, timeout_s: float) -> int: ...
    def search(
        self,
        mode: str,
        pattern: str,
        *,
        offset: int,
        limit: int,
        max_chars: int,
        timeout_s: float,
    ) -> tuple[
        int,
        int,
        list[tuple[str | bytes, str]],
        list[tuple[str | bytes, str, int, str, bool]],
    ]: ...

@final
class ClientTable:
    @staticmethod
    def open(path: str | os.PathLike[str], format: str, max_bytes: int) -> ClientTable: ...
    @staticmethod
    def parse(data: bytes, format: str) -> ClientTable: ...
    @property
    def container(self) -> str: ...
    @property
    def record_count(self) -> int: ...
    @property
    def record_size(self) -> int: ...
    @property
    def string_size(self) -> int: ...
    @property
    def field_count(self) -> int: ...
    @property
    def id_column(self) -> int | None: ...
    @property
    def sha256(self) -> str: ...
    @property
    def db2_header(self) -> tuple[int, int, int, int, int, int, int]: ...
    def find_ids(self, ids: list[int]) -> list[int | None]: ...
    def find_uint(self, column: int, values: list[int], limit: int) -> list[int]: ...
    def find_string(self, column: int, name: str, limit: int) -> list[int]: ...
    def values(self, record: int, columns: list[int]) -> list[int | float | str]: ...
    def record(self, record: int) -> list[int | float | str]: ...
