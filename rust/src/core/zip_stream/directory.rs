//! Opening an archive: the end of central directory record (classic or
//! ZIP64), the central directory, the room each member owns and the
//! classification of every entry.

use std::collections::HashMap;

use crate::core::error::{CoreError, CoreResult};

use super::{
    le_u16, le_u32, le_u64, EntryKind, ReadAt, ZipEntry, CENTRAL_LEN, EOCD64_LEN, EOCD_LEN,
    FLAG_ENCRYPTED, HOST_UNIX, LOCAL_LEN, LOCATOR_LEN, MAX_COMMENT_LEN, SIG_CENTRAL, SIG_EOCD,
    SIG_EOCD64, SIG_EOCD64_LOCATOR, S_IFLNK, S_IFMT, ZIP64_EXTRA_ID,
};

/// Raw name → index of its first entry.
pub(super) type NameIndex = HashMap<Box<[u8]>, usize>;

/// Steps 1–6 of opening (see the module doc of `zip_stream`): the entries,
/// named and classified, and the index of their raw names.
pub(super) fn read_directory<R: ReadAt + ?Sized>(
    reader: &R,
) -> CoreResult<(Vec<ZipEntry>, NameIndex)> {
    let file_len = reader.len();
    let end = find_end_record(reader, file_len)?;
    let cd_len = usize::try_from(end.cd_size).map_err(|_| CoreError::ZipCorrupt {
        what: "central directory is too large",
    })?;
    let mut cd = vec![0u8; cd_len];
    reader.read_exact_at(&mut cd, end.cd_offset)?;
    let mut raw = parse_central_directory(&cd, end.entries)?;
    assign_member_ranges(&mut raw, end.cd_offset)?;
    let index = classify_entries(&mut raw);
    let entries = raw.into_iter().map(|r| r.entry).collect();
    Ok((entries, index))
}

// --- end of central directory --------------------------------------------

struct EndRecord {
    entries: u64,
    cd_size: u64,
    cd_offset: u64,
}

pub(super) fn multi_disk() -> CoreError {
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
pub(super) fn find_extra(extra: &[u8], id: u16) -> Option<&[u8]> {
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
pub(super) struct Zip64Fields<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Zip64Fields<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
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

    pub(super) fn resolve32(&mut self, value: u32) -> CoreResult<u64> {
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
