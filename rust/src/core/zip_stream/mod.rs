//! Reads single members of a ZIP archive, verified against an expected
//! SHA-256 and size, without trusting anything the archive says.
//!
//! The archive is read through [`ReadAt`] (positional reads, no shared
//! cursor), so one [`ZipArchive`] can serve several threads. Nothing is ever
//! written to disk and no message carries member content.
//!
//! # Opening ([`ZipArchive::open`]), in this order
//!
//! 1. The End Of Central Directory record is searched backwards over a
//!    possible comment; its comment must end exactly at the end of the file.
//!    Missing → `ZipCorrupt`.
//! 2. A ZIP64 locator right before it switches to the ZIP64 end record.
//!    Multi-disk archives → `ZipCorrupt`.
//! 3. The central directory must lie inside the file and end exactly where
//!    the end record (ZIP64 or classic) begins; its entry count must match
//!    its size → `ZipCorrupt`.
//! 4. Every central header is parsed (ZIP64 extra field `0x0001` for sizes,
//!    offset and disk); offsets must lie before the central directory.
//! 5. Member ranges (local header + name + compressed data) must not overlap
//!    each other or the central directory: overlapping entries are a known
//!    zip-bomb trick → `ZipCorrupt`.
//! 6. Every entry is classified, first match wins: `bad_name` (not UTF-8,
//!    NUL, empty) > `unsafe_path` (absolute, drive letter, `..` component;
//!    `/` and `\` both separate) > `duplicate` (every entry whose name occurs
//!    more than once) > `symlink` (Unix host, `S_IFLNK`) > `directory`
//!    (trailing `/`) > `file`.
//!
//! # Reading a member, in this order (nothing is inflated before step 9)
//!
//! 1. Exact byte-equal name lookup → `ZipMemberNotFound`.
//! 2. Kind other than `file` → `ZipMemberUnsafe { reason: kind }`.
//! 3. Encryption flag → `ZipEncrypted`.
//! 4. Method other than 0 (stored) or 8 (deflate) → `ZipUnsupportedMethod`.
//! 5. Central size != expected size → `SizeMismatch`.
//! 6. Central or expected size > `max_bytes` → `ByteLimitExceeded`.
//! 7. Local header against the central directory: signature, name, the
//!    encryption and data-descriptor flags, method and, without a data
//!    descriptor, CRC-32 and both sizes → `ZipHeaderMismatch { field }`.
//! 8. With a data descriptor (flag bit 3): the descriptor after the data must
//!    agree with the central directory → `ZipHeaderMismatch { field }`.
//! 9. Inflate in output windows, CRC-32 and SHA-256 of each window computed
//!    right after it is produced. Output stops as soon as it would exceed
//!    `min(expected size, central size, max_bytes)`: `ByteLimitExceeded` if
//!    that limit is `max_bytes`, else `SizeMismatch` (its `actual` is then
//!    the limit + 1, a lower bound). The deflate stream must end exactly at
//!    the end of the compressed bytes → `ZipTruncated` / `ZipCorrupt`.
//! 10. Byte count == expected size → `SizeMismatch`; CRC-32 == central CRC →
//!     `CrcMismatch`; SHA-256 == expected → `HashMismatch`.
//!
//! # Files
//!
//! `directory.rs` opens the archive (steps 1–6 of opening), `member.rs`
//! checks a member before anything is inflated (steps 1–8 of reading) and
//! `inflate.rs` inflates, hashes and verifies it (steps 9 and 10). This file
//! holds the public types and entry points and the record layout they share.

mod directory;
mod inflate;
mod member;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fs::File;

use std::path::Path;

use crate::core::error::{CoreError, CoreResult};
use crate::core::fs::open_regular_file;
use crate::core::parallel::parallel_map;
use crate::core::recycle;
use crate::core::text::SourceText;

use self::directory::read_directory;
use self::inflate::{Sink, OUTPUT_WINDOW};
use self::member::MemberPlan;

pub use self::inflate::sha256_implementation;

const SIG_LOCAL: u32 = 0x0403_4b50;
const SIG_CENTRAL: u32 = 0x0201_4b50;
const SIG_EOCD: u32 = 0x0605_4b50;
const SIG_EOCD64: u32 = 0x0606_4b50;
const SIG_EOCD64_LOCATOR: u32 = 0x0706_4b50;
const SIG_DESCRIPTOR: u32 = 0x0807_4b50;

const EOCD_LEN: usize = 22;
const EOCD64_LEN: usize = 56;
const LOCATOR_LEN: usize = 20;
const CENTRAL_LEN: usize = 46;
const LOCAL_LEN: usize = 30;
const MAX_COMMENT_LEN: usize = 0xFFFF;

const FLAG_ENCRYPTED: u16 = 1;
const FLAG_DESCRIPTOR: u16 = 1 << 3;
const ZIP64_EXTRA_ID: u16 = 0x0001;
const HOST_UNIX: u16 = 3;
const S_IFMT: u32 = 0o170_000;
const S_IFLNK: u32 = 0o120_000;

const METHOD_STORED: u16 = 0;
const METHOD_DEFLATE: u16 = 8;

/// What the caller already knows about a member (typically from a manifest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    pub sha256: [u8; 32],
    pub size: u64,
}

/// Positional reads: no cursor, so `&self` can be shared between threads.
pub trait ReadAt {
    fn len(&self) -> u64;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fill `buf` from `offset`; reading past the end is `ZipTruncated`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> CoreResult<()>;
}

impl ReadAt for [u8] {
    fn len(&self) -> u64 {
        u64::try_from(<[u8]>::len(self)).unwrap_or(u64::MAX)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> CoreResult<()> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|start| self.get(start..start.checked_add(buf.len())?))
            .ok_or(CoreError::ZipTruncated {
                what: "read past the end of the archive",
            })?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

impl ReadAt for Vec<u8> {
    fn len(&self) -> u64 {
        ReadAt::len(self.as_slice())
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> CoreResult<()> {
        self.as_slice().read_exact_at(buf, offset)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn len(&self) -> u64 {
        (**self).len()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> CoreResult<()> {
        (**self).read_exact_at(buf, offset)
    }
}

#[cfg(unix)]
impl ReadAt for File {
    /// A file whose metadata cannot be read counts as empty; `open` then
    /// reports it as not a ZIP archive.
    fn len(&self) -> u64 {
        self.metadata().map(|m| m.len()).unwrap_or(0)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> CoreResult<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset).map_err(|err| {
            if err.kind() == std::io::ErrorKind::UnexpectedEof {
                // The directory was validated against the length at open
                // time, so the file shrank since.
                CoreError::ZipTruncated {
                    what: "file ends before the data it declares",
                }
            } else {
                CoreError::from(err)
            }
        })
    }
}

/// What an entry is; only `File` can be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
    Duplicate,
    UnsafePath,
    BadName,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Directory => "directory",
            EntryKind::Symlink => "symlink",
            EntryKind::Duplicate => "duplicate",
            EntryKind::UnsafePath => "unsafe_path",
            EntryKind::BadName => "bad_name",
        }
    }
}

/// One central-directory entry, sizes and offset already ZIP64-resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipEntry {
    /// The name; replacement characters stand in for invalid UTF-8 when the
    /// kind is `BadName`.
    pub name: String,
    pub kind: EntryKind,
    pub method: u16,
    pub flags: u16,
    pub compressed_size: u64,
    pub size: u64,
    pub crc32: u32,
    pub encrypted: bool,
    /// The central header carries a ZIP64 extra field.
    pub zip64: bool,
    raw_name: Box<[u8]>,
    local_offset: u64,
    /// First byte after this member's room: the next local header or the
    /// central directory. Header, data and descriptor must end before it.
    data_limit: u64,
}

/// A parsed archive. Reading members only takes `&self`.
#[derive(Debug)]
pub struct ZipArchive<R: ReadAt> {
    reader: R,
    entries: Vec<ZipEntry>,
    /// Raw name → index of its first entry.
    index: HashMap<Box<[u8]>, usize>,
}

impl<R: ReadAt> ZipArchive<R> {
    /// Parse and validate the central directory (steps 1–6 of the module doc).
    pub fn open(reader: R) -> CoreResult<Self> {
        let (entries, index) = read_directory(&reader)?;
        Ok(ZipArchive {
            reader,
            entries,
            index,
        })
    }

    pub fn entries(&self) -> &[ZipEntry] {
        &self.entries
    }

    /// Inflate + verify one member into `out` (cleared first). The hot path.
    /// On error `out` is left empty: unverified bytes never escape.
    pub fn read_member_into(
        &self,
        name: &str,
        expected: &Expected,
        max_bytes: u64,
        out: &mut Vec<u8>,
    ) -> CoreResult<()> {
        out.clear();
        let plan = self.prepare(name, expected, max_bytes)?;
        let len = plan_len(&plan)?;
        out.try_reserve_exact(len).map_err(|_| CoreError::Io {
            kind: "out_of_memory",
        })?;
        let result = if plan.method == METHOD_STORED {
            out.resize(len, 0);
            self.inflate(&plan, Sink::Keep(out.as_mut_slice()))
        } else {
            self.inflate(&plan, Sink::Append(out))
        };
        if result.is_err() {
            out.clear();
        }
        result
    }

    pub fn read_member(
        &self,
        name: &str,
        expected: &Expected,
        max_bytes: u64,
    ) -> CoreResult<Vec<u8>> {
        let mut out = Vec::new();
        self.read_member_into(name, expected, max_bytes, &mut out)?;
        Ok(out)
    }

    /// Like [`Self::read_member_into`] into a buffer of exactly
    /// `expected.size` bytes (for callers that own the allocation, such as a
    /// Python `bytes` object). On error the buffer content is unspecified.
    pub fn read_member_to_slice(
        &self,
        name: &str,
        expected: &Expected,
        max_bytes: u64,
        out: &mut [u8],
    ) -> CoreResult<()> {
        if u64::try_from(out.len()).ok() != Some(expected.size) {
            return Err(CoreError::InvalidArgument {
                what: "output buffer length must equal the expected size",
            });
        }
        let plan = self.prepare(name, expected, max_bytes)?;
        self.inflate(&plan, Sink::Keep(out))
    }

    /// Same pipeline, output only hashed, never kept (used as a benchmark
    /// baseline and for pure verification).
    pub fn verify_member(&self, name: &str, expected: &Expected, max_bytes: u64) -> CoreResult<()> {
        let plan = self.prepare(name, expected, max_bytes)?;
        let window = usize::try_from(plan.limit).map_or(OUTPUT_WINDOW, |l| l.min(OUTPUT_WINDOW));
        self.inflate(&plan, Sink::Discard(vec![0u8; window]))
    }

    /// Every check that happens before inflating (steps 1–8), without
    /// inflating: cheap, for callers that allocate only once a member is
    /// known to be readable.
    pub fn check_member(&self, name: &str, expected: &Expected, max_bytes: u64) -> CoreResult<()> {
        self.prepare(name, expected, max_bytes).map(|_| ())
    }

    /// Verify and decode one text member (UTF-8, optional BOM, no NUL).
    pub fn read_text(
        &self,
        name: &str,
        expected: &Expected,
        max_bytes: u64,
    ) -> CoreResult<SourceText> {
        let plan = self.prepare(name, expected, max_bytes)?;
        let len = plan_len(&plan)?;
        // A recycled buffer keeps its pages mapped (see `recycle`); only
        // taken once the member passed every check before inflating.
        let mut bytes = recycle::take(len).ok_or(CoreError::Io {
            kind: "out_of_memory",
        })?;
        let result = if plan.method == METHOD_STORED {
            bytes.resize(len, 0);
            self.inflate(&plan, Sink::Keep(bytes.as_mut_slice()))
        } else {
            self.inflate(&plan, Sink::Append(&mut bytes))
        };
        if let Err(err) = result {
            recycle::give(bytes);
            return Err(err);
        }
        SourceText::decode(bytes)
    }

    /// [`Self::read_text`] of each `(name, expected)` on up to `threads`
    /// threads (0 = every core), in the given order: one result per member,
    /// so that the caller can name the first member that failed.
    pub fn read_texts(
        &self,
        members: &[(&str, Expected)],
        max_bytes: u64,
        threads: usize,
    ) -> Vec<CoreResult<SourceText>>
    where
        R: Sync,
    {
        parallel_map(members, threads, |(name, expected)| {
            self.read_text(name, expected, max_bytes)
        })
    }
}

impl ZipArchive<File> {
    /// Opens the regular file at `path` (a FIFO or device is refused without
    /// blocking, see [`open_regular_file`]) and parses its directory.
    pub fn open_path(path: &Path) -> CoreResult<Self> {
        ZipArchive::open(open_regular_file(path)?)
    }
}

fn plan_len(plan: &MemberPlan) -> CoreResult<usize> {
    usize::try_from(plan.expected.size).map_err(|_| CoreError::ByteLimitExceeded {
        limit: plan.max_bytes,
    })
}

/// `Some(64 lowercase or uppercase hex digits)` → bytes.
pub fn parse_sha256_hex(s: &str) -> CoreResult<[u8; 32]> {
    let invalid = CoreError::InvalidArgument {
        what: "sha256 must be 64 hexadecimal digits",
    };
    let bytes = s.as_bytes();
    if bytes.len() != 64 {
        return Err(invalid);
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        let (Some(hi), Some(lo)) = (hex_value(pair[0]), hex_value(pair[1])) else {
            return Err(invalid);
        };
        *byte = hi << 4 | lo;
    }
    Ok(out)
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

// --- little-endian field access, `None` when out of bounds ------------------

fn le_u16(buf: &[u8], at: usize) -> Option<u16> {
    buf.get(at..at.checked_add(2)?)?
        .try_into()
        .ok()
        .map(u16::from_le_bytes)
}

fn le_u32(buf: &[u8], at: usize) -> Option<u32> {
    buf.get(at..at.checked_add(4)?)?
        .try_into()
        .ok()
        .map(u32::from_le_bytes)
}

fn le_u64(buf: &[u8], at: usize) -> Option<u64> {
    buf.get(at..at.checked_add(8)?)?
        .try_into()
        .ok()
        .map(u64::from_le_bytes)
}
