//! One error type for the whole core.
//!
//! Every variant has a stable machine code (`code()`) and an error class that
//! picks the Python exception. Messages never carry member content, row
//! values or search text: only names the caller already gave us, sizes and
//! byte offsets.

use std::fmt;

/// Which Python exception class an error maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    Archive,
    Integrity,
    Limit,
    TextDecode,
    RowSnapshot,
    InvalidArgument,
    Io,
    /// `project_research.errors.ResearchError`: a rejected research query.
    Research,
    /// `project_research.errors.ResearchUnavailable`: an outage of the
    /// research provider named here (the code becomes its `reason`).
    ResearchUnavailable {
        provider: &'static str,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    // --- archive structure -------------------------------------------------
    /// The bytes are not a ZIP archive we can trust (bad signature, offsets
    /// outside the file, inconsistent directory). `what` is a fixed phrase.
    ZipCorrupt {
        what: &'static str,
    },
    /// The file ends before a structure or member data it declares.
    ZipTruncated {
        what: &'static str,
    },
    /// Local header disagrees with the central directory.
    ZipHeaderMismatch {
        field: &'static str,
    },
    ZipUnsupportedMethod {
        method: u16,
    },
    ZipEncrypted,
    ZipMemberNotFound,
    /// The member exists but is not a readable regular file: duplicate name,
    /// absolute or `..` path, symlink, directory or undecodable name.
    ZipMemberUnsafe {
        reason: &'static str,
    },
    // --- integrity ----------------------------------------------------------
    CrcMismatch,
    SizeMismatch {
        expected: u64,
        actual: u64,
    },
    HashMismatch,
    // --- limits -------------------------------------------------------------
    /// Output would exceed the caller's byte limit (a zip bomb stops here).
    ByteLimitExceeded {
        limit: u64,
    },
    // --- text ---------------------------------------------------------------
    NulByte {
        offset: u64,
    },
    InvalidUtf8 {
        offset: u64,
    },
    // --- row snapshots ------------------------------------------------------
    RowsInvalidJson {
        offset: u64,
    },
    RowsDuplicateKey {
        offset: u64,
    },
    RowsNotObject {
        index: u64,
    },
    RowsBadShape {
        what: &'static str,
    },
    // --- arguments ----------------------------------------------------------
    InvalidArgument {
        what: &'static str,
    },
    Io {
        kind: &'static str,
    },
    /// The path names a FIFO, directory, socket or device, refused before
    /// anything is read (a FIFO would block the open forever).
    NotRegularFile {
        kind: &'static str,
    },
    // --- git repositories (ProjectResearch) ---------------------------------
    /// The repository cannot be opened or its object database is damaged
    /// (missing object of a partial clone, corrupt pack).
    GitRepositoryUnavailable {
        what: &'static str,
    },
    /// No commit with this ID; `found` names the kind of object that is there instead.
    GitCommitMissing {
        found: &'static str,
    },
    /// The deadline of a git read passed.
    GitTimeout,
    /// The commit's tree has more entries than the caller allows.
    GitTooManyEntries {
        limit: u64,
    },
    /// A git research request is malformed (bad object ID, mode, pattern).
    GitRequestInvalid {
        what: &'static str,
    },
    // --- client data files (DBC/DB2) ---------------------------------------
    /// Not a client data file this lineage reads, or its header contradicts
    /// itself or the engine's format (field count, record size, ID range).
    ClientFileInvalid {
        what: &'static str,
    },
    /// The header declares more records, index or string bytes than the file has.
    ClientFileTruncated {
        what: &'static str,
    },
    /// A string column points past the string block or its string has no NUL inside it.
    ClientStringInvalid {
        what: &'static str,
    },
}

impl CoreError {
    /// Stable code, part of the public contract. Never rename one.
    pub fn code(&self) -> &'static str {
        use CoreError::*;
        match self {
            ZipCorrupt { .. } => "zip_corrupt",
            ZipTruncated { .. } => "zip_truncated",
            ZipHeaderMismatch { .. } => "zip_header_mismatch",
            ZipUnsupportedMethod { .. } => "zip_unsupported_method",
            ZipEncrypted => "zip_encrypted",
            ZipMemberNotFound => "zip_member_not_found",
            ZipMemberUnsafe { .. } => "zip_member_unsafe",
            CrcMismatch => "crc_mismatch",
            SizeMismatch { .. } => "size_mismatch",
            HashMismatch => "hash_mismatch",
            ByteLimitExceeded { .. } => "byte_limit_exceeded",
            NulByte { .. } => "text_nul_byte",
            InvalidUtf8 { .. } => "text_invalid_utf8",
            RowsInvalidJson { .. } => "rows_invalid_json",
            RowsDuplicateKey { .. } => "rows_duplicate_key",
            RowsNotObject { .. } => "rows_not_object",
            RowsBadShape { .. } => "rows_bad_shape",
            InvalidArgument { .. } => "invalid_argument",
            Io { .. } => "io_error",
            NotRegularFile { .. } => "not_a_regular_file",
            GitRepositoryUnavailable { .. } => "repository_unavailable",
            GitCommitMissing { .. } => "commit_missing",
            GitTimeout => "timeout",
            GitTooManyEntries { .. } => "selection_too_large",
            GitRequestInvalid { .. } => "request_invalid",
            ClientFileInvalid { .. } => "client_file_invalid",
            ClientFileTruncated { .. } => "client_file_truncated",
            ClientStringInvalid { .. } => "client_string_invalid",
        }
    }

    pub fn class(&self) -> ErrorClass {
        use CoreError::*;
        match self {
            ZipCorrupt { .. }
            | ZipTruncated { .. }
            | ZipHeaderMismatch { .. }
            | ZipUnsupportedMethod { .. }
            | ZipEncrypted
            | ZipMemberNotFound
            | ZipMemberUnsafe { .. } => ErrorClass::Archive,
            CrcMismatch | SizeMismatch { .. } | HashMismatch => ErrorClass::Integrity,
            ByteLimitExceeded { .. } => ErrorClass::Limit,
            NulByte { .. } | InvalidUtf8 { .. } => ErrorClass::TextDecode,
            RowsInvalidJson { .. }
            | RowsDuplicateKey { .. }
            | RowsNotObject { .. }
            | RowsBadShape { .. } => ErrorClass::RowSnapshot,
            InvalidArgument { .. } => ErrorClass::InvalidArgument,
            Io { .. } | NotRegularFile { .. } => ErrorClass::Io,
            GitRepositoryUnavailable { .. } | GitTimeout => {
                ErrorClass::ResearchUnavailable { provider: "git" }
            }
            GitCommitMissing { .. } | GitTooManyEntries { .. } | GitRequestInvalid { .. } => {
                ErrorClass::Research
            }
            // The operator's files are broken: asking again will not help,
            // but it is no fault of the query either.
            ClientFileInvalid { .. } | ClientFileTruncated { .. } | ClientStringInvalid { .. } => {
                ErrorClass::ResearchUnavailable {
                    provider: "client_data",
                }
            }
        }
    }

    /// Safe, structured details (numbers and fixed phrases only).
    pub fn details(&self) -> Vec<(&'static str, DetailValue)> {
        use CoreError::*;
        use DetailValue::{Int, Text};
        match self {
            ZipCorrupt { what } | ZipTruncated { what } | RowsBadShape { what } => {
                vec![("what", Text(what))]
            }
            InvalidArgument { what }
            | GitRepositoryUnavailable { what }
            | GitRequestInvalid { what }
            | ClientFileInvalid { what }
            | ClientFileTruncated { what }
            | ClientStringInvalid { what } => vec![("what", Text(what))],
            GitCommitMissing { found } => vec![("found", Text(found))],
            GitTooManyEntries { limit } => {
                vec![("what", Text("tree_entries")), ("limit", Int(*limit))]
            }
            ZipHeaderMismatch { field } => vec![("field", Text(field))],
            ZipUnsupportedMethod { method } => vec![("method", Int(u64::from(*method)))],
            ZipMemberUnsafe { reason } => vec![("reason", Text(reason))],
            SizeMismatch { expected, actual } => {
                vec![("expected", Int(*expected)), ("actual", Int(*actual))]
            }
            ByteLimitExceeded { limit } => vec![("limit", Int(*limit))],
            NulByte { offset }
            | InvalidUtf8 { offset }
            | RowsInvalidJson { offset }
            | RowsDuplicateKey { offset } => vec![("offset", Int(*offset))],
            RowsNotObject { index } => vec![("index", Int(*index))],
            Io { kind } | NotRegularFile { kind } => vec![("kind", Text(kind))],
            ZipEncrypted | ZipMemberNotFound | CrcMismatch | HashMismatch | GitTimeout => vec![],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetailValue {
    Int(u64),
    Text(&'static str),
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use CoreError::*;
        match self {
            ZipCorrupt { what } => write!(f, "corrupt ZIP archive: {what}"),
            ZipTruncated { what } => write!(f, "truncated ZIP archive: {what}"),
            ZipHeaderMismatch { field } => {
                write!(
                    f,
                    "local header disagrees with central directory on {field}"
                )
            }
            ZipUnsupportedMethod { method } => {
                write!(
                    f,
                    "unsupported compression method {method} (only stored and deflate)"
                )
            }
            ZipEncrypted => write!(f, "encrypted ZIP members are not readable"),
            ZipMemberNotFound => write!(f, "no such member in the archive"),
            ZipMemberUnsafe { reason } => write!(f, "member is not a readable file: {reason}"),
            CrcMismatch => write!(f, "CRC-32 of the member does not match the archive"),
            SizeMismatch { expected, actual } => {
                write!(
                    f,
                    "member size mismatch: expected {expected} bytes, got {actual}"
                )
            }
            HashMismatch => write!(f, "SHA-256 of the member does not match the expected value"),
            ByteLimitExceeded { limit } => {
                write!(f, "member output exceeds the limit of {limit} bytes")
            }
            NulByte { offset } => write!(f, "NUL byte at byte offset {offset}: binary content"),
            InvalidUtf8 { offset } => write!(f, "invalid UTF-8 at byte offset {offset}"),
            RowsInvalidJson { offset } => write!(f, "invalid JSON at byte offset {offset}"),
            RowsDuplicateKey { offset } => {
                write!(f, "duplicate object key at byte offset {offset}")
            }
            RowsNotObject { index } => write!(f, "row {index} is not a JSON object"),
            RowsBadShape { what } => write!(f, "not a row snapshot: {what}"),
            InvalidArgument { what } => write!(f, "invalid argument: {what}"),
            Io { kind } => write!(f, "I/O error: {kind}"),
            NotRegularFile { kind } => write!(f, "not a regular file: {kind}"),
            GitRepositoryUnavailable { what } => {
                write!(f, "the git repository is not readable: {what}")
            }
            GitCommitMissing { found } => {
                write!(f, "the repository has no such commit (found: {found})")
            }
            GitTimeout => write!(f, "the git read did not finish in time"),
            GitTooManyEntries { limit } => {
                write!(f, "the commit's tree has more than {limit} entries")
            }
            GitRequestInvalid { what } => write!(f, "invalid argument: {what}"),
            ClientFileInvalid { what } => write!(f, "not a readable client data file: {what}"),
            ClientFileTruncated { what } => {
                write!(f, "the client data file ends inside its {what}")
            }
            ClientStringInvalid { what } => write!(f, "client data string: {what}"),
        }
    }
}

impl std::error::Error for CoreError {}

impl From<std::io::Error> for CoreError {
    fn from(err: std::io::Error) -> Self {
        // Only the kind: the OS message may embed a path.
        CoreError::Io {
            kind: io_kind_name(err.kind()),
        }
    }
}

/// A fixed name per I/O error kind (the OS message may embed a path).
fn io_kind_name(kind: std::io::ErrorKind) -> &'static str {
    use std::io::ErrorKind::*;
    match kind {
        NotFound => "not_found",
        PermissionDenied => "permission_denied",
        UnexpectedEof => "unexpected_eof",
        OutOfMemory => "out_of_memory",
        Interrupted => "interrupted",
        IsADirectory => "is_a_directory",
        InvalidInput => "invalid_input",
        _ => "other",
    }
}

impl CoreError {
    /// The error as the answer to a git research request: a rejected
    /// argument becomes `request_invalid` (a `ResearchError`), every other
    /// error keeps its own code and class.
    pub fn in_git_request(self) -> Self {
        match self {
            CoreError::InvalidArgument { what } => CoreError::GitRequestInvalid { what },
            other => other,
        }
    }
}

pub type CoreResult<T> = Result<T, CoreError>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The git reader once had its own error type whose conversion turned
    /// every core error into "search arguments rejected".
    #[test]
    fn core_errors_keep_their_code_in_git_requests() {
        let limit = CoreError::ByteLimitExceeded { limit: 5 };
        assert_eq!(limit.clone().in_git_request(), limit);
        let io = CoreError::Io { kind: "not_found" };
        assert_eq!(io.clone().in_git_request().code(), "io_error");
        let bad = CoreError::InvalidArgument {
            what: "unknown search mode",
        };
        let mapped = bad.in_git_request();
        assert_eq!(mapped.code(), "request_invalid");
        assert_eq!(mapped.class(), ErrorClass::Research);
        assert_eq!(
            mapped.details(),
            vec![("what", DetailValue::Text("unknown search mode"))]
        );
    }
}
