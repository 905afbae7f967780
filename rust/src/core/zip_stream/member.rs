//! Reading a member up to the point of inflating it: the lookup, the checks
//! on its central entry, its local header and its data descriptor, ending in
//! a [`MemberPlan`].

use crate::core::error::{CoreError, CoreResult};

use super::directory::{find_extra, Zip64Fields};
use super::{
    le_u16, le_u32, le_u64, EntryKind, Expected, ReadAt, ZipArchive, ZipEntry, FLAG_DESCRIPTOR,
    FLAG_ENCRYPTED, LOCAL_LEN, METHOD_DEFLATE, METHOD_STORED, SIG_DESCRIPTOR, SIG_LOCAL,
    ZIP64_EXTRA_ID,
};

/// Everything step 1–8 established, ready for inflating.
#[derive(Debug)]
pub(super) struct MemberPlan {
    pub(super) method: u16,
    pub(super) data_start: u64,
    pub(super) compressed_size: u64,
    pub(super) crc32: u32,
    pub(super) expected: Expected,
    pub(super) max_bytes: u64,
    /// min(expected size, central size, max_bytes).
    pub(super) limit: u64,
}

impl<R: ReadAt> ZipArchive<R> {
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

    /// Steps 1–8 of reading (see the module doc of `zip_stream`).
    pub(super) fn prepare(
        &self,
        name: &str,
        expected: &Expected,
        max_bytes: u64,
    ) -> CoreResult<MemberPlan> {
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
}

struct LocalHeader {
    data_start: u64,
    zip64: bool,
}
