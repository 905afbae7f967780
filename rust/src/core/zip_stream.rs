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

use std::collections::HashMap;
use std::fs::File;

use flate2::{Decompress, FlushDecompress, Status};
use sha2::{Digest, Sha256};

use crate::core::error::{CoreError, CoreResult};

cpufeatures::new!(cpuid_sha, "sha", "sse2", "ssse3", "sse4.1");

/// The sha2 crate picks SHA-NI at run time through the same detection.
pub fn sha256_implementation() -> &'static str {
    if cpuid_sha::get() {
        "sha-ni"
    } else {
        "software"
    }
}

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

/// Compressed bytes are read in chunks of this size.
const INPUT_CHUNK: usize = 256 * 1024;
/// Output is produced, hashed and CRC'd in windows of this size, so each
/// window is still in cache when it is hashed.
const OUTPUT_WINDOW: usize = 256 * 1024;

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

/// Everything step 1–8 established, ready for inflating.
#[derive(Debug)]
struct MemberPlan {
    method: u16,
    data_start: u64,
    compressed_size: u64,
    crc32: u32,
    expected: Expected,
    max_bytes: u64,
    /// min(expected size, central size, max_bytes).
    limit: u64,
}

/// Where inflated bytes go: into the caller's buffer or into a reused
/// window that is only hashed.
enum Sink<'a> {
    Keep(&'a mut [u8]),
    /// Appends to a Vec with `limit` bytes reserved: the decoder writes into
    /// spare capacity, so the output is never zero-filled first.
    Append(&'a mut Vec<u8>),
    Discard(Vec<u8>),
}

impl Sink<'_> {
    fn window(&mut self, pos: usize, room: usize) -> CoreResult<&mut [u8]> {
        let window = match self {
            Sink::Keep(buf) => pos.checked_add(room).and_then(|end| buf.get_mut(pos..end)),
            Sink::Discard(scratch) => scratch.get_mut(..room),
            Sink::Append(_) => None,
        };
        window.ok_or(CoreError::InvalidArgument {
            what: "output buffer is smaller than the member",
        })
    }
}

struct Digests {
    crc: crc32fast::Hasher,
    sha: Sha256,
}

impl Digests {
    fn new() -> Self {
        Digests {
            crc: crc32fast::Hasher::new(),
            sha: Sha256::new(),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        self.crc.update(bytes);
        self.sha.update(bytes);
    }
}

impl<R: ReadAt> ZipArchive<R> {
    /// Parse and validate the central directory (steps 1–6 of the module doc).
    pub fn open(reader: R) -> CoreResult<Self> {
        let file_len = reader.len();
        let end = find_end_record(&reader, file_len)?;
        let cd_len = usize::try_from(end.cd_size).map_err(|_| CoreError::ZipCorrupt {
            what: "central directory is too large",
        })?;
        let mut cd = vec![0u8; cd_len];
        reader.read_exact_at(&mut cd, end.cd_offset)?;
        let mut raw = parse_central_directory(&cd, end.entries)?;
        assign_member_ranges(&mut raw, end.cd_offset)?;
        let index = classify_entries(&mut raw);
        let entries = raw.into_iter().map(|r| r.entry).collect();
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

    fn lookup(&self, name: &str) -> CoreResult<&ZipEntry> {
        if let Some(entry) = self
            .index
            .get(name.as_bytes())
            .and_then(|&i| self.entries.get(i))
        {
            return Ok(entry);
        }
        // A non-UTF-8 name can only be asked for by its lossy spelling; say
        // why it cannot be read rather than pretending it is absent.
        if self
            .entries
            .iter()
            .any(|e| e.kind == EntryKind::BadName && e.name == name)
        {
            return Err(CoreError::ZipMemberUnsafe {
                reason: EntryKind::BadName.as_str(),
            });
        }
        Err(CoreError::ZipMemberNotFound)
    }

    /// Steps 1–8 of the module doc.
    fn prepare(&self, name: &str, expected: &Expected, max_bytes: u64) -> CoreResult<MemberPlan> {
        let entry = self.lookup(name)?;
        if entry.kind != EntryKind::File {
            return Err(CoreError::ZipMemberUnsafe {
                reason: entry.kind.as_str(),
            });
        }
        if entry.encrypted {
            return Err(CoreError::ZipEncrypted);
        }
        if entry.method != METHOD_STORED && entry.method != METHOD_DEFLATE {
            return Err(CoreError::ZipUnsupportedMethod {
                method: entry.method,
            });
        }
        if entry.size != expected.size {
            return Err(CoreError::SizeMismatch {
                expected: expected.size,
                actual: entry.size,
            });
        }
        if entry.size > max_bytes || expected.size > max_bytes {
            return Err(CoreError::ByteLimitExceeded { limit: max_bytes });
        }
        if entry.method == METHOD_STORED && entry.compressed_size != entry.size {
            return Err(CoreError::ZipCorrupt {
                what: "stored member has different compressed and uncompressed sizes",
            });
        }
        let local = self.check_local_header(entry)?;
        let data_end = local
            .data_start
            .checked_add(entry.compressed_size)
            .filter(|&end| end <= entry.data_limit)
            .ok_or(CoreError::ZipCorrupt {
                what: "member data overlaps another entry",
            })?;
        if entry.flags & FLAG_DESCRIPTOR != 0 {
            self.check_descriptor(entry, data_end, local.zip64)?;
        }
        Ok(MemberPlan {
            method: entry.method,
            data_start: local.data_start,
            compressed_size: entry.compressed_size,
            crc32: entry.crc32,
            expected: *expected,
            max_bytes,
            limit: expected.size.min(entry.size).min(max_bytes),
        })
    }

    fn check_local_header(&self, entry: &ZipEntry) -> CoreResult<LocalHeader> {
        let mut fixed = [0u8; LOCAL_LEN];
        self.reader.read_exact_at(&mut fixed, entry.local_offset)?;
        let mismatch = |field| CoreError::ZipHeaderMismatch { field };
        if le_u32(&fixed, 0) != Some(SIG_LOCAL) {
            return Err(mismatch("signature"));
        }
        let flags = le_u16(&fixed, 6).unwrap_or(0);
        let method = le_u16(&fixed, 8).unwrap_or(0);
        let crc32 = le_u32(&fixed, 14).unwrap_or(0);
        let compressed32 = le_u32(&fixed, 18).unwrap_or(0);
        let size32 = le_u32(&fixed, 22).unwrap_or(0);
        let name_len = le_u16(&fixed, 26).map_or(0, usize::from);
        let extra_len = le_u16(&fixed, 28).map_or(0, usize::from);

        let overlap = CoreError::ZipCorrupt {
            what: "local header overlaps another entry",
        };
        let var_len = name_len + extra_len; // two u16s: cannot overflow
        let var_start = entry
            .local_offset
            .checked_add(LOCAL_LEN as u64)
            .ok_or(overlap.clone())?;
        let data_start = var_start
            .checked_add(var_len as u64)
            .filter(|&end| end <= entry.data_limit)
            .ok_or(overlap)?;
        let mut var = vec![0u8; var_len];
        self.reader.read_exact_at(&mut var, var_start)?;
        let (name, extra) = var.split_at(name_len);

        if name != &*entry.raw_name {
            return Err(mismatch("name"));
        }
        if (flags ^ entry.flags) & FLAG_ENCRYPTED != 0 {
            return Err(mismatch("encrypted"));
        }
        if (flags ^ entry.flags) & FLAG_DESCRIPTOR != 0 {
            return Err(mismatch("data_descriptor"));
        }
        if method != entry.method {
            return Err(mismatch("method"));
        }
        let zip64_block = find_extra(extra, ZIP64_EXTRA_ID);
        if flags & FLAG_DESCRIPTOR == 0 {
            if crc32 != entry.crc32 {
                return Err(mismatch("crc32"));
            }
            // Local ZIP64 field order: size, then compressed size.
            let mut z = Zip64Fields::new(zip64_block.unwrap_or(&[]));
            let size = z.resolve32(size32)?;
            let compressed = z.resolve32(compressed32)?;
            if compressed != entry.compressed_size {
                return Err(mismatch("compressed_size"));
            }
            if size != entry.size {
                return Err(mismatch("size"));
            }
        }
        Ok(LocalHeader {
            data_start,
            zip64: zip64_block.is_some(),
        })
    }

    /// The data descriptor follows the data: optional signature, CRC-32 and
    /// sizes (64-bit when the local header has a ZIP64 field, as APPNOTE
    /// 4.3.9.2 says). When a signature-less descriptor happens to start with
    /// the signature value, both readings are tried.
    fn check_descriptor(&self, entry: &ZipEntry, data_end: u64, zip64: bool) -> CoreResult<()> {
        let room = entry.data_limit.saturating_sub(data_end);
        let len = usize::try_from(room).map_or(24, |r| r.min(24));
        let mut buf = [0u8; 24];
        let buf = &mut buf[..len];
        self.reader.read_exact_at(buf, data_end)?;

        let skips: &[usize] = if le_u32(buf, 0) == Some(SIG_DESCRIPTOR) {
            &[4, 0]
        } else {
            &[0]
        };
        let mut first_error = None;
        for &skip in skips {
            let parsed = if zip64 {
                le_u32(buf, skip)
                    .zip(le_u64(buf, skip + 4))
                    .zip(le_u64(buf, skip + 12))
            } else {
                le_u32(buf, skip)
                    .zip(le_u32(buf, skip + 4).map(u64::from))
                    .zip(le_u32(buf, skip + 8).map(u64::from))
            };
            let Some(((crc32, compressed), size)) = parsed else {
                continue;
            };
            let field = if crc32 != entry.crc32 {
                "descriptor_crc32"
            } else if compressed != entry.compressed_size {
                "descriptor_compressed_size"
            } else if size != entry.size {
                "descriptor_size"
            } else {
                return Ok(());
            };
            first_error.get_or_insert(CoreError::ZipHeaderMismatch { field });
        }
        Err(first_error.unwrap_or(CoreError::ZipCorrupt {
            what: "data descriptor is missing or overlaps the next entry",
        }))
    }

    /// Steps 9 and 10 of the module doc.
    fn inflate(&self, plan: &MemberPlan, mut sink: Sink<'_>) -> CoreResult<()> {
        let mut digests = Digests::new();
        let produced = match plan.method {
            METHOD_STORED => self.copy_stored(plan, &mut sink, &mut digests)?,
            _ => self.inflate_deflate(plan, &mut sink, &mut digests)?,
        };
        if produced != plan.expected.size {
            return Err(CoreError::SizeMismatch {
                expected: plan.expected.size,
                actual: produced,
            });
        }
        if digests.crc.finalize() != plan.crc32 {
            return Err(CoreError::CrcMismatch);
        }
        if digests.sha.finalize().as_slice() != plan.expected.sha256 {
            return Err(CoreError::HashMismatch);
        }
        Ok(())
    }

    fn copy_stored(
        &self,
        plan: &MemberPlan,
        sink: &mut Sink<'_>,
        digests: &mut Digests,
    ) -> CoreResult<u64> {
        // prepare() made sure compressed size == size == limit.
        let mut pos: u64 = 0;
        while pos < plan.limit {
            let room =
                usize::try_from(plan.limit - pos).map_or(OUTPUT_WINDOW, |r| r.min(OUTPUT_WINDOW));
            let at = usize::try_from(pos).map_err(|_| too_large())?;
            let window = sink.window(at, room)?;
            let offset = plan.data_start.checked_add(pos).ok_or_else(too_large)?;
            self.reader.read_exact_at(window, offset)?;
            digests.update(window);
            pos += room as u64;
        }
        Ok(pos)
    }

    fn inflate_deflate(
        &self,
        plan: &MemberPlan,
        sink: &mut Sink<'_>,
        digests: &mut Digests,
    ) -> CoreResult<u64> {
        let limit = usize::try_from(plan.limit).map_err(|_| too_large())?;
        let chunk =
            usize::try_from(plan.compressed_size).map_or(INPUT_CHUNK, |c| c.min(INPUT_CHUNK));
        let mut input = vec![0u8; chunk];
        let (mut start, mut end) = (0usize, 0usize);
        let mut next_in = plan.data_start;
        let mut left_in = plan.compressed_size;
        let mut decoder = Decompress::new(false);
        // Once the limit is reached, one more byte of room tells whether
        // the stream would produce more.
        let mut probe = [0u8; 1];
        let mut pos = 0usize;
        loop {
            if start == end && left_in > 0 {
                let n = usize::try_from(left_in).map_or(chunk, |l| l.min(chunk));
                self.reader.read_exact_at(&mut input[..n], next_in)?;
                next_in = next_in.checked_add(n as u64).ok_or_else(too_large)?;
                left_in -= n as u64;
                (start, end) = (0, n);
            }
            let room = (limit - pos).min(OUTPUT_WINDOW);
            let (in_before, out_before) = (decoder.total_in(), decoder.total_out());
            let corrupt = |_| CoreError::ZipCorrupt {
                what: "invalid deflate data",
            };
            let status = match sink {
                Sink::Append(out) if room > 0 => {
                    // Bounded by the capacity reserved for `limit` bytes.
                    let status = decoder
                        .decompress_vec(&input[start..end], out, FlushDecompress::None)
                        .map_err(corrupt)?;
                    if out.len() > limit {
                        return Err(over_limit(plan));
                    }
                    digests.update(&out[pos..]);
                    status
                }
                _ => {
                    let dest = if room > 0 {
                        sink.window(pos, room)?
                    } else {
                        &mut probe[..]
                    };
                    let status = decoder
                        .decompress(&input[start..end], dest, FlushDecompress::None)
                        .map_err(corrupt)?;
                    let produced =
                        usize::try_from(decoder.total_out() - out_before).unwrap_or(usize::MAX);
                    if room > 0 {
                        digests.update(dest.get(..produced).unwrap_or(dest));
                    }
                    status
                }
            };
            let consumed = usize::try_from(decoder.total_in() - in_before).unwrap_or(usize::MAX);
            let produced = usize::try_from(decoder.total_out() - out_before).unwrap_or(usize::MAX);
            start = start.saturating_add(consumed).min(end);
            if room == 0 {
                if produced > 0 {
                    return Err(over_limit(plan));
                }
            } else {
                pos += produced;
            }
            match status {
                Status::StreamEnd if start == end && left_in == 0 => return Ok(pos as u64),
                Status::StreamEnd => {
                    return Err(CoreError::ZipCorrupt {
                        what: "data after the end of the deflate stream",
                    })
                }
                Status::Ok | Status::BufError if consumed == 0 && produced == 0 => {
                    return Err(if start == end && left_in == 0 {
                        CoreError::ZipTruncated {
                            what: "deflate stream ends before its end marker",
                        }
                    } else {
                        CoreError::ZipCorrupt {
                            what: "deflate stream makes no progress",
                        }
                    });
                }
                Status::Ok | Status::BufError => {}
            }
        }
    }
}

struct LocalHeader {
    data_start: u64,
    zip64: bool,
}

fn plan_len(plan: &MemberPlan) -> CoreResult<usize> {
    usize::try_from(plan.expected.size).map_err(|_| CoreError::ByteLimitExceeded {
        limit: plan.max_bytes,
    })
}

fn too_large() -> CoreError {
    CoreError::ZipCorrupt {
        what: "offset or size out of range",
    }
}

/// The stream wants to write past `plan.limit`.
fn over_limit(plan: &MemberPlan) -> CoreError {
    if plan.limit == plan.max_bytes {
        CoreError::ByteLimitExceeded {
            limit: plan.max_bytes,
        }
    } else {
        CoreError::SizeMismatch {
            expected: plan.expected.size,
            actual: plan.limit.saturating_add(1),
        }
    }
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

// --- end of central directory --------------------------------------------

struct EndRecord {
    entries: u64,
    cd_size: u64,
    cd_offset: u64,
}

fn multi_disk() -> CoreError {
    CoreError::ZipCorrupt {
        what: "multi-disk archives are not supported",
    }
}

fn find_end_record<R: ReadAt + ?Sized>(reader: &R, file_len: u64) -> CoreResult<EndRecord> {
    let not_zip = CoreError::ZipCorrupt {
        what: "end of central directory record not found",
    };
    let tail_len = file_len.min((EOCD_LEN + MAX_COMMENT_LEN) as u64);
    if tail_len < EOCD_LEN as u64 {
        return Err(not_zip);
    }
    let tail_start = file_len - tail_len;
    let mut tail = vec![0u8; tail_len as usize]; // ≤ 65 557
    reader.read_exact_at(&mut tail, tail_start)?;

    // The record whose comment ends exactly at the end of the file, nearest
    // to the end (usually the very last 22 bytes).
    let at = (0..=tail.len() - EOCD_LEN)
        .rev()
        .find(|&i| {
            le_u32(&tail, i) == Some(SIG_EOCD)
                && le_u16(&tail, i + 20)
                    .is_some_and(|c| i + EOCD_LEN + usize::from(c) == tail.len())
        })
        .ok_or(not_zip)?;
    let eocd = &tail[at..];
    let eocd_pos = tail_start + at as u64;
    let field16 = |off| le_u16(eocd, off).unwrap_or(0);
    let field32 = |off| le_u32(eocd, off).unwrap_or(0);

    let locator_pos = eocd_pos.checked_sub(LOCATOR_LEN as u64);
    let mut locator = [0u8; LOCATOR_LEN];
    let has_zip64 = match locator_pos {
        Some(pos) => {
            reader.read_exact_at(&mut locator, pos)?;
            le_u32(&locator, 0) == Some(SIG_EOCD64_LOCATOR)
        }
        None => false,
    };

    let (record, directory_end) = if let (true, Some(locator_pos)) = (has_zip64, locator_pos) {
        let eocd64_disk = le_u32(&locator, 4).unwrap_or(0);
        let eocd64_pos = le_u64(&locator, 8).unwrap_or(0);
        let total_disks = le_u32(&locator, 16).unwrap_or(0);
        if eocd64_disk != 0 || total_disks > 1 {
            return Err(multi_disk());
        }
        if eocd64_pos
            .checked_add(EOCD64_LEN as u64)
            .is_none_or(|end| end > locator_pos)
        {
            return Err(CoreError::ZipCorrupt {
                what: "ZIP64 end record is outside the file",
            });
        }
        let mut rec = [0u8; EOCD64_LEN];
        reader.read_exact_at(&mut rec, eocd64_pos)?;
        if le_u32(&rec, 0) != Some(SIG_EOCD64) {
            return Err(CoreError::ZipCorrupt {
                what: "bad ZIP64 end record signature",
            });
        }
        let disk = le_u32(&rec, 16).unwrap_or(0);
        let cd_disk = le_u32(&rec, 20).unwrap_or(0);
        let entries_here = le_u64(&rec, 24).unwrap_or(0);
        let entries = le_u64(&rec, 32).unwrap_or(0);
        if disk != 0 || cd_disk != 0 || entries_here != entries {
            return Err(multi_disk());
        }
        let record = EndRecord {
            entries,
            cd_size: le_u64(&rec, 40).unwrap_or(0),
            cd_offset: le_u64(&rec, 48).unwrap_or(0),
        };
        (record, eocd64_pos)
    } else {
        if field16(4) != 0 || field16(6) != 0 || field16(8) != field16(10) {
            return Err(multi_disk());
        }
        let record = EndRecord {
            entries: u64::from(field16(10)),
            cd_size: u64::from(field32(12)),
            cd_offset: u64::from(field32(16)),
        };
        (record, eocd_pos)
    };

    if record.cd_offset.checked_add(record.cd_size) != Some(directory_end) {
        return Err(CoreError::ZipCorrupt {
            what: "central directory does not end where the end record begins",
        });
    }
    if record.entries > record.cd_size / CENTRAL_LEN as u64 {
        return Err(CoreError::ZipCorrupt {
            what: "entry count does not fit the central directory",
        });
    }
    Ok(record)
}

// --- central directory ------------------------------------------------------

/// Returns the first extra block with `id`. A malformed tail (some writers
/// pad with zeros) ends the walk rather than failing.
fn find_extra(extra: &[u8], id: u16) -> Option<&[u8]> {
    let mut pos = 0usize;
    while let (Some(block_id), Some(len)) = (le_u16(extra, pos), le_u16(extra, pos + 2)) {
        let start = pos + 4;
        let body = extra.get(start..start + usize::from(len))?;
        if block_id == id {
            return Some(body);
        }
        pos = start + usize::from(len);
    }
    None
}

/// The ZIP64 extra field holds, in a fixed order, only the values whose
/// classic field is saturated (`0xFFFFFFFF` / `0xFFFF`).
struct Zip64Fields<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Zip64Fields<'a> {
    fn new(data: &'a [u8]) -> Self {
        Zip64Fields { data, pos: 0 }
    }

    fn take(&mut self, n: usize) -> CoreResult<&'a [u8]> {
        let field = self
            .data
            .get(self.pos..self.pos + n)
            .ok_or(CoreError::ZipCorrupt {
                what: "ZIP64 extra field is too short",
            })?;
        self.pos += n;
        Ok(field)
    }

    fn resolve32(&mut self, value: u32) -> CoreResult<u64> {
        if value != u32::MAX {
            return Ok(u64::from(value));
        }
        Ok(le_u64(self.take(8)?, 0).unwrap_or(0))
    }

    fn resolve16(&mut self, value: u16) -> CoreResult<u64> {
        if value != u16::MAX {
            return Ok(u64::from(value));
        }
        Ok(u64::from(le_u32(self.take(4)?, 0).unwrap_or(0)))
    }
}

/// What the central header says beyond `ZipEntry`; only used to classify.
struct RawEntry {
    entry: ZipEntry,
    version_made_by: u16,
    external_attrs: u32,
}

fn parse_central_directory(cd: &[u8], count: u64) -> CoreResult<Vec<RawEntry>> {
    let corrupt = |what| CoreError::ZipCorrupt { what };
    // `count` ≤ cd.len() / 46 was checked against the end record.
    let mut entries = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    let mut pos = 0usize;
    for _ in 0..count {
        let header = cd
            .get(pos..pos + CENTRAL_LEN)
            .ok_or(corrupt("central directory is truncated"))?;
        let f16 = |off| le_u16(header, off).unwrap_or(0);
        let f32 = |off| le_u32(header, off).unwrap_or(0);
        if f32(0) != SIG_CENTRAL {
            return Err(corrupt("bad central directory header signature"));
        }
        let (name_len, extra_len, comment_len) = (
            usize::from(f16(28)),
            usize::from(f16(30)),
            usize::from(f16(32)),
        );
        let name_start = pos + CENTRAL_LEN;
        let extra_start = name_start + name_len;
        let next = extra_start + extra_len + comment_len;
        let raw_name = cd
            .get(name_start..extra_start)
            .ok_or(corrupt("central directory is truncated"))?;
        let extra = cd
            .get(extra_start..extra_start + extra_len)
            .ok_or(corrupt("central directory is truncated"))?;
        if next > cd.len() {
            return Err(corrupt("central directory is truncated"));
        }

        let zip64_block = find_extra(extra, ZIP64_EXTRA_ID);
        // Central ZIP64 field order: size, compressed size, offset, disk.
        let mut z = Zip64Fields::new(zip64_block.unwrap_or(&[]));
        let size = z.resolve32(f32(24))?;
        let compressed_size = z.resolve32(f32(20))?;
        let local_offset = z.resolve32(f32(42))?;
        if z.resolve16(f16(34))? != 0 {
            return Err(multi_disk());
        }
        let flags = f16(8);
        entries.push(RawEntry {
            entry: ZipEntry {
                name: String::new(),
                kind: EntryKind::File,
                method: f16(10),
                flags,
                compressed_size,
                size,
                crc32: f32(16),
                encrypted: flags & FLAG_ENCRYPTED != 0,
                zip64: zip64_block.is_some(),
                raw_name: raw_name.into(),
                local_offset,
                data_limit: 0,
            },
            version_made_by: f16(4),
            external_attrs: f32(38),
        });
        pos = next;
    }
    if pos != cd.len() {
        return Err(corrupt(
            "central directory size disagrees with its entry count",
        ));
    }
    Ok(entries)
}

/// Each member owns `[local offset, next local offset or central directory)`.
/// Its smallest possible extent (fixed local header + name + compressed
/// data) must fit; the exact extent is checked again when reading.
fn assign_member_ranges(entries: &mut [RawEntry], cd_offset: u64) -> CoreResult<()> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_unstable_by_key(|&i| entries[i].entry.local_offset);
    for (rank, &i) in order.iter().enumerate() {
        let limit = match order.get(rank + 1) {
            Some(&next) => entries[next].entry.local_offset,
            None => cd_offset,
        };
        let entry = &mut entries[i].entry;
        let min_end = entry
            .local_offset
            .checked_add((LOCAL_LEN + entry.raw_name.len()) as u64)
            .and_then(|end| end.checked_add(entry.compressed_size));
        match min_end {
            Some(end) if end <= limit => entry.data_limit = limit,
            _ if rank + 1 < order.len() => {
                return Err(CoreError::ZipCorrupt {
                    what: "member data overlaps another entry",
                })
            }
            _ => {
                return Err(CoreError::ZipCorrupt {
                    what: "member data overlaps the central directory",
                })
            }
        }
    }
    Ok(())
}

fn is_unsafe_path(name: &str) -> bool {
    let bytes = name.as_bytes();
    let absolute = matches!(bytes.first(), Some(b'/' | b'\\'));
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    absolute || drive || name.split(['/', '\\']).any(|part| part == "..")
}

/// Sets names and kinds; returns the raw-name index (first occurrence).
fn classify_entries(raw: &mut [RawEntry]) -> HashMap<Box<[u8]>, usize> {
    let mut index: HashMap<Box<[u8]>, usize> = HashMap::with_capacity(raw.len());
    let mut duplicated = vec![false; raw.len()];
    for (i, r) in raw.iter().enumerate() {
        match index.get(&r.entry.raw_name) {
            Some(&first) => {
                duplicated[first] = true;
                duplicated[i] = true;
            }
            None => {
                index.insert(r.entry.raw_name.clone(), i);
            }
        }
    }
    for (r, &dup) in raw.iter_mut().zip(&duplicated) {
        let (name, kind) = match std::str::from_utf8(&r.entry.raw_name) {
            Err(_) => (
                String::from_utf8_lossy(&r.entry.raw_name).into_owned(),
                EntryKind::BadName,
            ),
            Ok(name) => {
                let kind = if name.is_empty() || name.contains('\0') {
                    EntryKind::BadName
                } else if is_unsafe_path(name) {
                    EntryKind::UnsafePath
                } else if dup {
                    EntryKind::Duplicate
                } else if r.version_made_by >> 8 == HOST_UNIX
                    && (r.external_attrs >> 16) & S_IFMT == S_IFLNK
                {
                    EntryKind::Symlink
                } else if name.ends_with('/') {
                    EntryKind::Directory
                } else {
                    EntryKind::File
                };
                (name.to_owned(), kind)
            }
        };
        r.entry.name = name;
        r.entry.kind = kind;
    }
    index
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::DeflateEncoder;
    use flate2::Compression;

    use super::*;

    // --- a tiny ZIP writer that can lie on purpose ---------------------------

    #[derive(Clone, Default)]
    struct Spec {
        name: Vec<u8>,
        data: Vec<u8>,
        method: u16,
        flags: u16,
        zip64: bool,
        descriptor: bool,
        descriptor_sig: bool,
        version_made_by: u16,
        external_attrs: u32,
        /// Replaces the compressed bytes.
        payload: Option<Vec<u8>>,
        crc: Option<u32>,
        size: Option<u64>,
        compressed: Option<u64>,
        offset: Option<u64>,
        local_sig: Option<u32>,
        local_name: Option<Vec<u8>>,
        local_method: Option<u16>,
        local_flags: Option<u16>,
        local_crc: Option<u32>,
        local_size: Option<u64>,
        local_compressed: Option<u64>,
        descriptor_crc: Option<u32>,
        descriptor_size: Option<u64>,
    }

    fn file(name: &str, data: &[u8], method: u16) -> Spec {
        Spec {
            name: name.as_bytes().to_vec(),
            data: data.to_vec(),
            method,
            version_made_by: 0x031e,
            ..Spec::default()
        }
    }

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut enc = DeflateEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn zip64_extra(values: &[u64]) -> Vec<u8> {
        let mut extra = Vec::new();
        extra.extend(1u16.to_le_bytes());
        extra.extend(((values.len() * 8) as u16).to_le_bytes());
        for v in values {
            extra.extend(v.to_le_bytes());
        }
        extra
    }

    fn build(specs: &[Spec], zip64_end: bool, comment: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for s in specs {
            let payload = s.payload.clone().unwrap_or_else(|| {
                if s.method == METHOD_DEFLATE {
                    deflate(&s.data)
                } else {
                    s.data.clone()
                }
            });
            let crc = s.crc.unwrap_or_else(|| crc32fast::hash(&s.data));
            let size = s.size.unwrap_or(s.data.len() as u64);
            let comp = s.compressed.unwrap_or(payload.len() as u64);
            let offset = s.offset.unwrap_or(out.len() as u64);
            let flags = s.flags | if s.descriptor { FLAG_DESCRIPTOR } else { 0 };

            let (mut l_crc, mut l_size, mut l_comp) = if s.descriptor {
                (0, 0, 0)
            } else {
                (crc, size, comp)
            };
            l_crc = s.local_crc.unwrap_or(l_crc);
            l_size = s.local_size.unwrap_or(l_size);
            l_comp = s.local_compressed.unwrap_or(l_comp);
            let (l_extra, l_size32, l_comp32) = if s.zip64 {
                (zip64_extra(&[l_size, l_comp]), u32::MAX, u32::MAX)
            } else {
                (Vec::new(), l_size as u32, l_comp as u32)
            };
            let l_name = s.local_name.clone().unwrap_or_else(|| s.name.clone());
            out.extend(s.local_sig.unwrap_or(SIG_LOCAL).to_le_bytes());
            out.extend(45u16.to_le_bytes());
            out.extend(s.local_flags.unwrap_or(flags).to_le_bytes());
            out.extend(s.local_method.unwrap_or(s.method).to_le_bytes());
            out.extend([0u8; 4]);
            out.extend(l_crc.to_le_bytes());
            out.extend(l_comp32.to_le_bytes());
            out.extend(l_size32.to_le_bytes());
            out.extend((l_name.len() as u16).to_le_bytes());
            out.extend((l_extra.len() as u16).to_le_bytes());
            out.extend(&l_name);
            out.extend(&l_extra);
            out.extend(&payload);
            if s.descriptor {
                if s.descriptor_sig {
                    out.extend(SIG_DESCRIPTOR.to_le_bytes());
                }
                out.extend(s.descriptor_crc.unwrap_or(crc).to_le_bytes());
                let d_size = s.descriptor_size.unwrap_or(size);
                if s.zip64 {
                    out.extend(comp.to_le_bytes());
                    out.extend(d_size.to_le_bytes());
                } else {
                    out.extend((comp as u32).to_le_bytes());
                    out.extend((d_size as u32).to_le_bytes());
                }
            }

            let (c_extra, c_size32, c_comp32, c_off32) = if s.zip64 {
                (
                    zip64_extra(&[size, comp, offset]),
                    u32::MAX,
                    u32::MAX,
                    u32::MAX,
                )
            } else {
                (Vec::new(), size as u32, comp as u32, offset as u32)
            };
            central.extend(SIG_CENTRAL.to_le_bytes());
            central.extend(s.version_made_by.to_le_bytes());
            central.extend(45u16.to_le_bytes());
            central.extend(flags.to_le_bytes());
            central.extend(s.method.to_le_bytes());
            central.extend([0u8; 4]);
            central.extend(crc.to_le_bytes());
            central.extend(c_comp32.to_le_bytes());
            central.extend(c_size32.to_le_bytes());
            central.extend((s.name.len() as u16).to_le_bytes());
            central.extend((c_extra.len() as u16).to_le_bytes());
            central.extend(0u16.to_le_bytes());
            central.extend(0u16.to_le_bytes());
            central.extend(0u16.to_le_bytes());
            central.extend(s.external_attrs.to_le_bytes());
            central.extend(c_off32.to_le_bytes());
            central.extend(&s.name);
            central.extend(&c_extra);
        }
        let cd_offset = out.len() as u64;
        let cd_size = central.len() as u64;
        out.extend(&central);
        let n = specs.len() as u64;
        if zip64_end {
            let eocd64_pos = out.len() as u64;
            out.extend(SIG_EOCD64.to_le_bytes());
            out.extend(44u64.to_le_bytes());
            out.extend(45u16.to_le_bytes());
            out.extend(45u16.to_le_bytes());
            out.extend(0u32.to_le_bytes());
            out.extend(0u32.to_le_bytes());
            out.extend(n.to_le_bytes());
            out.extend(n.to_le_bytes());
            out.extend(cd_size.to_le_bytes());
            out.extend(cd_offset.to_le_bytes());
            out.extend(SIG_EOCD64_LOCATOR.to_le_bytes());
            out.extend(0u32.to_le_bytes());
            out.extend(eocd64_pos.to_le_bytes());
            out.extend(1u32.to_le_bytes());
        }
        out.extend(SIG_EOCD.to_le_bytes());
        out.extend([0u8; 4]);
        let (n16, size32, off32) = if zip64_end {
            (u16::MAX, u32::MAX, u32::MAX)
        } else {
            (n as u16, cd_size as u32, cd_offset as u32)
        };
        out.extend(n16.to_le_bytes());
        out.extend(n16.to_le_bytes());
        out.extend(size32.to_le_bytes());
        out.extend(off32.to_le_bytes());
        out.extend((comment.len() as u16).to_le_bytes());
        out.extend(comment);
        out
    }

    fn zip(specs: &[Spec]) -> Vec<u8> {
        build(specs, false, b"")
    }

    fn expect(data: &[u8]) -> Expected {
        Expected {
            sha256: Sha256::digest(data).into(),
            size: data.len() as u64,
        }
    }

    fn text(len: usize) -> Vec<u8> {
        let line = b"The quick brown fox jumps over the lazy dog 0123456789\n";
        line.iter().copied().cycle().take(len).collect()
    }

    fn noise(len: usize, mut seed: u64) -> Vec<u8> {
        (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect()
    }

    fn read(bytes: Vec<u8>, name: &str, data: &[u8]) -> CoreResult<Vec<u8>> {
        ZipArchive::open(bytes)?.read_member(name, &expect(data), u64::MAX)
    }

    fn roundtrip(spec: Spec, zip64_end: bool) {
        let data = spec.data.clone();
        let name = String::from_utf8(spec.name.clone()).unwrap();
        let archive = ZipArchive::open(build(&[spec], zip64_end, b"a comment")).unwrap();
        let ex = expect(&data);
        assert_eq!(archive.read_member(&name, &ex, u64::MAX).unwrap(), data);
        archive
            .verify_member(&name, &ex, data.len() as u64)
            .unwrap();
        let mut buf = vec![0u8; data.len()];
        archive
            .read_member_to_slice(&name, &ex, u64::MAX, &mut buf)
            .unwrap();
        assert_eq!(buf, data);
        let mut reused = b"stale".to_vec();
        archive
            .read_member_into(&name, &ex, u64::MAX, &mut reused)
            .unwrap();
        assert_eq!(reused, data);
    }

    fn err_of(bytes: Vec<u8>, name: &str, ex: &Expected, max: u64) -> CoreError {
        match ZipArchive::open(bytes) {
            Err(e) => e,
            Ok(a) => {
                let via_verify = a.verify_member(name, ex, max).unwrap_err();
                let via_read = a.read_member(name, ex, max).unwrap_err();
                assert_eq!(via_verify, via_read);
                via_read
            }
        }
    }

    // --- happy paths ------------------------------------------------------------

    #[test]
    fn stored_and_deflate_roundtrip() {
        for method in [METHOD_STORED, METHOD_DEFLATE] {
            for data in [Vec::new(), b"x".to_vec(), text(1 << 20), noise(700_000, 7)] {
                roundtrip(file("dir/member.txt", &data, method), false);
            }
        }
    }

    #[test]
    fn zip64_entries_and_end_record() {
        for method in [METHOD_STORED, METHOD_DEFLATE] {
            let spec = Spec {
                zip64: true,
                ..file("big.bin", &text(300_000), method)
            };
            roundtrip(spec.clone(), true);
            roundtrip(spec, false);
            roundtrip(file("plain.bin", &text(1000), method), true);
        }
        let archive = ZipArchive::open(build(
            &[Spec {
                zip64: true,
                ..file("a", b"abc", 0)
            }],
            true,
            b"",
        ))
        .unwrap();
        assert!(archive.entries()[0].zip64);
    }

    #[test]
    fn data_descriptors() {
        for (sig, zip64) in [(false, false), (true, false), (true, true), (false, true)] {
            for method in [METHOD_STORED, METHOD_DEFLATE] {
                let spec = Spec {
                    descriptor: true,
                    descriptor_sig: sig,
                    zip64,
                    ..file("d", &text(5000), method)
                };
                roundtrip(spec, false);
            }
        }
        // A signature-less descriptor whose CRC happens to equal the signature.
        let data = b"crc".to_vec();
        let spec = Spec {
            descriptor: true,
            crc: Some(SIG_DESCRIPTOR),
            ..file("d", &data, 0)
        };
        let err = read(zip(std::slice::from_ref(&spec)), "d", &data).unwrap_err();
        assert_eq!(err, CoreError::CrcMismatch); // descriptor parsed fine, CRC is simply wrong
    }

    #[test]
    fn entries_report_sizes_and_kinds() {
        let archive = ZipArchive::open(zip(&[
            file("a.txt", &text(100), METHOD_DEFLATE),
            Spec {
                external_attrs: 0o120_777 << 16,
                ..file("link", b"target", 0)
            },
            file("dir/", b"", 0),
        ]))
        .unwrap();
        let e = archive.entries();
        assert_eq!(e.len(), 3);
        assert_eq!(
            (e[0].kind, e[0].size, e[0].crc32),
            (EntryKind::File, 100, crc32fast::hash(&text(100)))
        );
        assert_eq!(e[0].method, METHOD_DEFLATE);
        assert_eq!(e[1].kind, EntryKind::Symlink);
        assert_eq!(e[2].kind, EntryKind::Directory);
    }

    // --- classification -----------------------------------------------------------

    #[test]
    fn classification_and_precedence() {
        let symlink_attrs = 0o120_777 << 16;
        let cases: Vec<(Spec, EntryKind)> = vec![
            (file("ok.txt", b"1", 0), EntryKind::File),
            (file("d/", b"", 0), EntryKind::Directory),
            (
                Spec {
                    external_attrs: symlink_attrs,
                    ..file("l", b"x", 0)
                },
                EntryKind::Symlink,
            ),
            // Symlink mode on a non-Unix host is a plain file.
            (
                Spec {
                    external_attrs: symlink_attrs,
                    version_made_by: 0x0014,
                    ..file("w", b"x", 0)
                },
                EntryKind::File,
            ),
            (
                Spec {
                    external_attrs: symlink_attrs,
                    ..file("ld/", b"", 0)
                },
                EntryKind::Symlink,
            ),
            (
                Spec {
                    name: b"\xff\xfe.txt".to_vec(),
                    ..file("", b"1", 0)
                },
                EntryKind::BadName,
            ),
            (
                Spec {
                    name: b"../\xff".to_vec(),
                    ..file("", b"1", 0)
                },
                EntryKind::BadName,
            ),
            (file("a\0b", b"1", 0), EntryKind::BadName),
            (file("", b"1", 0), EntryKind::BadName),
            (file("../x", b"1", 0), EntryKind::UnsafePath),
            (file("a/../../x", b"1", 0), EntryKind::UnsafePath),
            (file("/etc/passwd", b"1", 0), EntryKind::UnsafePath),
            (file("\\x", b"1", 0), EntryKind::UnsafePath),
            (file("C:\\x", b"1", 0), EntryKind::UnsafePath),
            (file("c:x", b"1", 0), EntryKind::UnsafePath),
            (file("a\\..\\..\\x", b"1", 0), EntryKind::UnsafePath),
            (file("a/..", b"1", 0), EntryKind::UnsafePath),
            (
                Spec {
                    external_attrs: symlink_attrs,
                    ..file("../l", b"x", 0)
                },
                EntryKind::UnsafePath,
            ),
            (file("a..b/..c", b"1", 0), EntryKind::File),
        ];
        for (spec, kind) in cases {
            let name = String::from_utf8_lossy(&spec.name).into_owned();
            let archive = ZipArchive::open(zip(std::slice::from_ref(&spec))).unwrap();
            assert_eq!(archive.entries()[0].kind, kind, "{name:?}");
            if kind != EntryKind::File {
                let err = archive
                    .read_member(&name, &expect(&spec.data), u64::MAX)
                    .unwrap_err();
                assert_eq!(
                    err,
                    CoreError::ZipMemberUnsafe {
                        reason: kind.as_str()
                    },
                    "{name:?}"
                );
            }
        }
    }

    #[test]
    fn duplicates_are_all_unreadable() {
        let bytes = zip(&[
            file("same", b"one", 0),
            file("other", b"2", 0),
            file("same", b"two", 8),
        ]);
        let archive = ZipArchive::open(bytes).unwrap();
        let kinds: Vec<_> = archive.entries().iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [EntryKind::Duplicate, EntryKind::File, EntryKind::Duplicate]
        );
        let err = archive
            .read_member("same", &expect(b"one"), 100)
            .unwrap_err();
        assert_eq!(
            err,
            CoreError::ZipMemberUnsafe {
                reason: "duplicate"
            }
        );
        // Duplicated unsafe names stay unsafe_path (precedence).
        let archive =
            ZipArchive::open(zip(&[file("../x", b"1", 0), file("../x", b"2", 0)])).unwrap();
        assert!(archive
            .entries()
            .iter()
            .all(|e| e.kind == EntryKind::UnsafePath));
    }

    #[test]
    fn lookup_is_exact() {
        let archive = ZipArchive::open(zip(&[file("Dir/A.txt", b"1", 0)])).unwrap();
        for name in ["dir/a.txt", "Dir/A.txt ", "Dir\\A.txt", "Dir/A.tx", ""] {
            assert_eq!(
                archive.read_member(name, &expect(b"1"), 10).unwrap_err(),
                CoreError::ZipMemberNotFound
            );
        }
        assert_eq!(
            archive.read_member("Dir/A.txt", &expect(b"1"), 10).unwrap(),
            b"1"
        );
    }

    // --- member errors ---------------------------------------------------------------

    #[test]
    fn encrypted_and_unsupported_methods() {
        let spec = Spec {
            flags: FLAG_ENCRYPTED,
            ..file("e", b"secret", 0)
        };
        assert_eq!(
            read(zip(&[spec]), "e", b"secret").unwrap_err(),
            CoreError::ZipEncrypted
        );
        for method in [12u16, 14, 93, 99] {
            let spec = Spec {
                payload: Some(b"xx".to_vec()),
                ..file("m", b"data", method)
            };
            assert_eq!(
                read(zip(&[spec]), "m", b"data").unwrap_err(),
                CoreError::ZipUnsupportedMethod { method }
            );
        }
        // Encryption is reported before the method.
        let spec = Spec {
            flags: FLAG_ENCRYPTED,
            payload: Some(b"xx".to_vec()),
            ..file("e", b"data", 99)
        };
        assert_eq!(
            read(zip(&[spec]), "e", b"data").unwrap_err(),
            CoreError::ZipEncrypted
        );
    }

    #[test]
    fn early_size_and_limit_checks() {
        let data = text(1000);
        let bytes = zip(&[file("t", &data, 8)]);
        let mut ex = expect(&data);
        ex.size = 999;
        assert_eq!(
            err_of(bytes.clone(), "t", &ex, u64::MAX),
            CoreError::SizeMismatch {
                expected: 999,
                actual: 1000
            }
        );
        assert_eq!(
            err_of(bytes.clone(), "t", &expect(&data), 999),
            CoreError::ByteLimitExceeded { limit: 999 }
        );
        let archive = ZipArchive::open(bytes).unwrap();
        archive.verify_member("t", &expect(&data), 1000).unwrap();
        archive.check_member("t", &expect(&data), 1000).unwrap();
        let mut small = vec![0u8; 10];
        assert!(matches!(
            archive.read_member_to_slice("t", &expect(&data), 1000, &mut small),
            Err(CoreError::InvalidArgument { .. })
        ));
    }

    #[test]
    fn zip_bomb_with_lying_sizes_stops_at_the_limit() {
        let zeros = vec![0u8; 8 << 20];
        let payload = deflate(&zeros);
        let claimed = b"0123456789".repeat(10);
        // The central directory (and the local header) claim 100 bytes.
        let spec = Spec {
            payload: Some(payload.clone()),
            ..file("bomb", &claimed, 8)
        };
        let bytes = zip(&[spec]);
        let err = err_of(bytes.clone(), "bomb", &expect(&claimed), u64::MAX);
        assert_eq!(
            err,
            CoreError::SizeMismatch {
                expected: 100,
                actual: 101
            }
        );
        let err = err_of(bytes, "bomb", &expect(&claimed), 100);
        assert_eq!(err, CoreError::ByteLimitExceeded { limit: 100 });
        // Honest sizes: rejected before inflating.
        let honest = Spec {
            payload: Some(payload),
            ..file("bomb", &zeros, 8)
        };
        let err = err_of(zip(&[honest]), "bomb", &expect(&zeros), 1 << 20);
        assert_eq!(err, CoreError::ByteLimitExceeded { limit: 1 << 20 });
    }

    #[test]
    fn short_stream_is_a_size_mismatch() {
        let data = text(5000);
        let spec = Spec {
            payload: Some(deflate(&data[..4000])),
            crc: Some(crc32fast::hash(&data)),
            ..file("s", &data, 8)
        };
        let err = read(zip(&[spec]), "s", &data).unwrap_err();
        assert_eq!(
            err,
            CoreError::SizeMismatch {
                expected: 5000,
                actual: 4000
            }
        );
    }

    #[test]
    fn crc_and_hash_mismatch() {
        let data = text(3000);
        for method in [0, 8] {
            let spec = Spec {
                crc: Some(crc32fast::hash(&data) ^ 1),
                ..file("c", &data, method)
            };
            assert_eq!(
                read(zip(&[spec]), "c", &data).unwrap_err(),
                CoreError::CrcMismatch
            );
            let mut ex = expect(&data);
            ex.sha256[0] ^= 1;
            assert_eq!(
                err_of(zip(&[file("c", &data, method)]), "c", &ex, u64::MAX),
                CoreError::HashMismatch
            );
        }
    }

    #[test]
    fn broken_deflate_streams() {
        let data = text(100_000);
        let full = deflate(&data);
        let cut = Spec {
            payload: Some(full[..full.len() / 2].to_vec()),
            ..file("t", &data, 8)
        };
        assert_eq!(
            read(zip(&[cut]), "t", &data).unwrap_err(),
            CoreError::ZipTruncated {
                what: "deflate stream ends before its end marker"
            }
        );
        let mut padded = full.clone();
        padded.extend(b"trailing");
        let spec = Spec {
            payload: Some(padded),
            ..file("t", &data, 8)
        };
        assert_eq!(
            read(zip(&[spec]), "t", &data).unwrap_err(),
            CoreError::ZipCorrupt {
                what: "data after the end of the deflate stream"
            }
        );
        let spec = Spec {
            payload: Some(vec![0xff; 64]),
            ..file("t", &data, 8)
        };
        assert!(matches!(
            read(zip(&[spec]), "t", &data).unwrap_err(),
            CoreError::ZipCorrupt { .. }
        ));
        let spec = Spec {
            payload: Some(Vec::new()),
            ..file("t", &data, 8)
        };
        assert!(matches!(
            read(zip(&[spec]), "t", &data).unwrap_err(),
            CoreError::ZipTruncated { .. }
        ));
        let spec = Spec {
            payload: Some(b"abc".to_vec()),
            ..file("t", b"abcd", 0)
        };
        assert!(matches!(
            read(zip(&[spec]), "t", b"abcd").unwrap_err(),
            CoreError::ZipCorrupt { .. }
        ));
    }

    #[test]
    fn local_header_mismatches() {
        let data = text(2000);
        let base = file("name.txt", &data, 8);
        let cases: Vec<(Spec, &str)> = vec![
            (
                Spec {
                    local_sig: Some(0x1234_5678),
                    ..base.clone()
                },
                "signature",
            ),
            (
                Spec {
                    local_name: Some(b"other.txt".to_vec()),
                    ..base.clone()
                },
                "name",
            ),
            (
                Spec {
                    local_name: Some(b"NAME.txt".to_vec()),
                    ..base.clone()
                },
                "name",
            ),
            (
                Spec {
                    local_flags: Some(FLAG_ENCRYPTED),
                    ..base.clone()
                },
                "encrypted",
            ),
            (
                Spec {
                    local_flags: Some(FLAG_DESCRIPTOR),
                    ..base.clone()
                },
                "data_descriptor",
            ),
            (
                Spec {
                    local_method: Some(0),
                    ..base.clone()
                },
                "method",
            ),
            (
                Spec {
                    local_crc: Some(1),
                    ..base.clone()
                },
                "crc32",
            ),
            (
                Spec {
                    local_size: Some(1999),
                    ..base.clone()
                },
                "size",
            ),
            (
                Spec {
                    local_compressed: Some(7),
                    ..base.clone()
                },
                "compressed_size",
            ),
            (
                Spec {
                    local_size: Some(1),
                    zip64: true,
                    ..base.clone()
                },
                "size",
            ),
            (
                Spec {
                    local_compressed: Some(1),
                    zip64: true,
                    ..base.clone()
                },
                "compressed_size",
            ),
            (
                Spec {
                    descriptor: true,
                    descriptor_crc: Some(5),
                    ..base.clone()
                },
                "descriptor_crc32",
            ),
            (
                Spec {
                    descriptor: true,
                    descriptor_sig: true,
                    descriptor_size: Some(5),
                    ..base.clone()
                },
                "descriptor_size",
            ),
            (
                Spec {
                    descriptor: true,
                    zip64: true,
                    descriptor_size: Some(5),
                    ..base.clone()
                },
                "descriptor_size",
            ),
        ];
        for (spec, field) in cases {
            assert_eq!(
                read(zip(&[spec]), "name.txt", &data).unwrap_err(),
                CoreError::ZipHeaderMismatch { field },
                "{field}"
            );
        }
        // With a data descriptor, the local CRC and sizes are not compared.
        let spec = Spec {
            descriptor: true,
            local_crc: Some(9),
            local_size: Some(9),
            ..base
        };
        assert_eq!(read(zip(&[spec]), "name.txt", &data).unwrap(), data);
    }

    // --- archive structure ---------------------------------------------------------------

    #[test]
    fn overlapping_entries_are_corrupt() {
        let a = file("a", &text(1000), 0);
        let same_offset = Spec {
            offset: Some(0),
            ..file("b", &text(1000), 0)
        };
        let err = ZipArchive::open(zip(&[a.clone(), same_offset])).unwrap_err();
        assert_eq!(
            err,
            CoreError::ZipCorrupt {
                what: "member data overlaps another entry"
            }
        );
        // b's data claims to run past c's local header.
        let b = Spec {
            compressed: Some(2000),
            size: Some(2000),
            ..file("b", &text(1000), 0)
        };
        let err = ZipArchive::open(zip(&[b, file("c", b"c", 0)])).unwrap_err();
        assert_eq!(
            err,
            CoreError::ZipCorrupt {
                what: "member data overlaps another entry"
            }
        );
        let last = Spec {
            compressed: Some(2000),
            size: Some(2000),
            ..file("b", &text(1000), 0)
        };
        let err = ZipArchive::open(zip(&[last])).unwrap_err();
        assert_eq!(
            err,
            CoreError::ZipCorrupt {
                what: "member data overlaps the central directory"
            }
        );
        let far = Spec {
            offset: Some(1 << 40),
            zip64: true,
            ..file("f", b"x", 0)
        };
        assert!(matches!(
            ZipArchive::open(zip(&[far])).unwrap_err(),
            CoreError::ZipCorrupt { .. }
        ));
    }

    #[test]
    fn multi_disk_is_corrupt() {
        let mut bytes = zip(&[file("a", b"1", 0)]);
        let eocd = bytes.len() - EOCD_LEN;
        bytes[eocd + 4] = 1;
        assert_eq!(ZipArchive::open(bytes).unwrap_err(), multi_disk());
        let mut bytes = build(&[file("a", b"1", 0)], true, b"");
        let locator = bytes.len() - EOCD_LEN - LOCATOR_LEN;
        bytes[locator + 16] = 3;
        assert_eq!(ZipArchive::open(bytes).unwrap_err(), multi_disk());
    }

    #[test]
    fn end_record_search_and_bounds() {
        let comment = vec![b'#'; MAX_COMMENT_LEN];
        let archive = ZipArchive::open(build(&[file("a", b"1", 0)], false, &comment)).unwrap();
        assert_eq!(archive.entries().len(), 1);
        let mut trailing = zip(&[file("a", b"1", 0)]);
        trailing.extend(b"junk");
        assert!(matches!(
            ZipArchive::open(trailing).unwrap_err(),
            CoreError::ZipCorrupt { .. }
        ));
        let empty = zip(&[]);
        assert!(ZipArchive::open(empty).unwrap().entries().is_empty());
        for junk in [Vec::new(), vec![0u8; 10], b"PK\x05\x06".to_vec()] {
            assert!(matches!(
                ZipArchive::open(junk).unwrap_err(),
                CoreError::ZipCorrupt { .. }
            ));
        }
        // Entry count larger than the directory.
        let mut bytes = zip(&[file("a", b"1", 0)]);
        let eocd = bytes.len() - EOCD_LEN;
        bytes[eocd + 8] = 2;
        bytes[eocd + 10] = 2;
        assert!(matches!(
            ZipArchive::open(bytes).unwrap_err(),
            CoreError::ZipCorrupt { .. }
        ));
    }

    /// Every prefix and a batch of random corruptions: typed errors, no panic.
    #[test]
    fn truncation_and_corruption_never_panic() {
        let specs = [
            file("a.txt", &text(3000), 8),
            Spec {
                zip64: true,
                descriptor: true,
                descriptor_sig: true,
                ..file("b", &noise(500, 3), 8)
            },
            file("c", b"stored", 0),
        ];
        let bytes = build(&specs, true, b"c");
        let names = ["a.txt", "b", "c"];
        let exercise = |candidate: Vec<u8>| {
            if let Ok(archive) = ZipArchive::open(candidate) {
                for (name, spec) in names.iter().zip(&specs) {
                    let _ = archive.read_member(name, &expect(&spec.data), 1 << 20);
                }
            }
        };
        for cut in 0..bytes.len() {
            assert!(ZipArchive::open(bytes[..cut].to_vec()).is_err());
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..3000 {
            let mut candidate = bytes.clone();
            for _ in 0..4 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let at = (seed % candidate.len() as u64) as usize;
                candidate[at] = (seed >> 32) as u8;
            }
            exercise(candidate);
        }
    }

    #[test]
    fn sha256_hex_parsing() {
        let hex = "E3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(
            parse_sha256_hex(hex).unwrap(),
            <[u8; 32]>::from(Sha256::digest(b""))
        );
        for bad in [
            "",
            "e3b0",
            &hex[1..],
            &format!("{hex}0"),
            &hex.replace('E', "g"),
            &hex.replacen('E', "é", 1)[..64],
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85 ",
        ] {
            assert!(
                matches!(
                    parse_sha256_hex(bad),
                    Err(CoreError::InvalidArgument { .. })
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn file_reader_works() {
        let path = std::env::temp_dir().join(format!("zip_stream_test_{}.zip", std::process::id()));
        std::fs::write(&path, zip(&[file("a", &text(70_000), 8)])).unwrap();
        let archive = ZipArchive::open(File::open(&path).unwrap());
        std::fs::remove_file(&path).unwrap();
        archive
            .unwrap()
            .verify_member("a", &expect(&text(70_000)), u64::MAX)
            .unwrap();
    }
}
