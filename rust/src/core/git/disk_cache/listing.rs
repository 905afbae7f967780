//! The listing file of one commit (`tree-<commit>.vbt`): its format.

use super::*;

pub(super) fn listing_name(commit: &ObjectId) -> String {
    format!("{LISTING_PREFIX}{commit}{LISTING_SUFFIX}")
}

pub(super) fn kind_code(kind: EntryKind) -> u8 {
    match kind {
        EntryKind::Blob => 0,
        EntryKind::Executable => 1,
        EntryKind::Symlink => 2,
        EntryKind::Submodule => 3,
    }
}

/// One record per entry: blob ID, kind, absent flag, size, path length, then
/// the path.
pub(super) fn listing_body(entries: &[TreeEntry]) -> Vec<u8> {
    let paths: usize = entries.iter().map(|e| e.path.len()).sum();
    let mut body = Vec::with_capacity(entries.len() * LISTING_RECORD_LEN + paths);
    for e in entries {
        body.extend_from_slice(e.oid.as_bytes());
        body.extend_from_slice(&[kind_code(e.kind), u8::from(e.absent), 0, 0]);
        body.extend_from_slice(&e.size.to_le_bytes());
        body.extend_from_slice(&(e.path.len() as u32).to_le_bytes());
        body.extend_from_slice(&e.path);
    }
    body
}

pub(super) fn parse_listing(all: &[u8], commit: &ObjectId) -> Option<Vec<TreeEntry>> {
    if all.len() < LISTING_HEADER_LEN
        || &all[..8] != LISTING_MAGIC
        || read_u32(all, 8) != LISTING_VERSION
        || crc32fast::hash(&all[..48]) != read_u32(all, 48)
        || read_u64(all, 16) != all.len() as u64
        || &all[24..44] != commit.as_bytes()
    {
        return None;
    }
    let body = &all[LISTING_HEADER_LEN..];
    if crc32fast::hash(body) != read_u32(all, 44) {
        return None;
    }
    let count = read_u32(all, 12) as usize;
    let mut entries = Vec::with_capacity(count.min(body.len() / LISTING_RECORD_LEN));
    let mut at = 0;
    for _ in 0..count {
        let record = body.get(at..at + LISTING_RECORD_LEN)?;
        let kind = match record[20] {
            0 => EntryKind::Blob,
            1 => EntryKind::Executable,
            2 => EntryKind::Symlink,
            3 => EntryKind::Submodule,
            _ => return None,
        };
        let len = read_u32(record, 32) as usize;
        let path = body.get(at + LISTING_RECORD_LEN..at + LISTING_RECORD_LEN + len)?;
        entries.push(TreeEntry {
            path: path.to_vec(),
            kind,
            oid: ObjectId::try_from(&record[..20]).ok()?,
            size: read_u64(record, 24),
            absent: match record[21] {
                0 => false,
                1 => true,
                _ => return None,
            },
            unusable: None,
        });
        at += LISTING_RECORD_LEN + len;
    }
    (at == body.len()).then_some(entries)
}
