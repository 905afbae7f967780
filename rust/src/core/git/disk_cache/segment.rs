//! Reading a segment file: mapping, checks, the entry table.

use super::*;

impl Segment {
    /// Maps and checks a segment file: header, length, table checksum,
    /// every entry inside the file and the table sorted by blob ID.
    pub(super) fn open(path: &Path) -> Option<Segment> {
        // Only regular files the cache wrote: no symbolic link is followed.
        if !fs::symlink_metadata(path).ok()?.file_type().is_file() {
            return None;
        }
        let file = File::open(path).ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let bytes = map_file(&file).ok()?;
        let entries = parse_table((*bytes).as_ref())?;
        let lanes = (0..LANES)
            .map(|_| Arc::new(Lane(Arc::clone(&bytes))) as SharedBytes)
            .collect();
        Some(Segment {
            path: path.to_path_buf(),
            bytes,
            lanes,
            entries,
            touched: AtomicBool::new(false),
            rejected: AtomicBool::new(false),
        })
    }

    /// Checks an entry in one pass over its text: the checksum of text,
    /// line index and digest, and for a text flagged ASCII that it is (an
    /// ASCII flag on other text would fold wrongly). Each piece of the text
    /// is read from memory once for both.
    pub(super) fn check(&self, e: &Entry) -> bool {
        let all = (*self.bytes).as_ref();
        let text = &all[e.text_start..e.text_start + e.text_len];
        let index = &all[e.index_start..e.index_start + 4 * e.blocks];
        let ascii = e.flags & FLAG_ASCII != 0;
        let mut crc = crc32fast::Hasher::new();
        let mut ok = true;
        for piece in text.chunks(CHECK_CHUNK) {
            crc.update(piece);
            ok &= !ascii || piece.is_ascii();
        }
        crc.update(index);
        crc.update(&e.sha256);
        ok && crc.finalize() == e.crc
    }

    /// The entry's content once it passes [`Self::check`]; run by the
    /// worker that searches the text right after, so the checks of all
    /// entries run in parallel and the text is then read from the CPU cache.
    pub(super) fn content(&self, i: usize) -> Option<Content> {
        let e = self.entries.get(i)?;
        if !self.check(e) {
            return None;
        }
        let all = (*self.bytes).as_ref();
        let text = &all[e.text_start..e.text_start + e.text_len];
        let index = &all[e.index_start..e.index_start + 4 * e.blocks];
        match e.verdict {
            VERDICT_BINARY => Some(Err(SkipReason::Binary)),
            VERDICT_NOT_UTF8 => Some(Err(SkipReason::NotUtf8)),
            VERDICT_TEXT => {
                let blocks: Vec<u32> = index
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                let facts = TextFacts {
                    had_bom: e.flags & FLAG_BOM != 0,
                    is_ascii: e.flags & FLAG_ASCII != 0,
                    line_count: e.line_count as usize,
                };
                debug_assert!(!facts.is_ascii || text.is_ascii());
                let text = SourceText::from_parts(
                    Arc::clone(&self.lanes[lane()]),
                    e.text_start,
                    e.text_start + e.text_len,
                    facts,
                    blocks,
                )
                .ok()?;
                Some(Ok(Arc::new(text)))
            }
            _ => None,
        }
    }
}

/// How many handles a segment hands out (see [`Segment::lanes`]).
const LANES: usize = 8;

/// A handle on a segment's bytes with a counter of its own.
pub(super) struct Lane(SharedBytes);

impl AsRef<[u8]> for Lane {
    fn as_ref(&self) -> &[u8] {
        (*self.0).as_ref()
    }
}

/// This thread's lane: threads numbered in the order they first ask, so
/// the workers of one search, started together, get different lanes.
pub(super) fn lane() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static LANE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % LANES;
    }
    LANE.with(|lane| *lane)
}

pub(super) fn parse_table(all: &[u8]) -> Option<Vec<Entry>> {
    if all.len() < HEADER_LEN || &all[..8] != MAGIC || read_u32(all, 8) != VERSION {
        return None;
    }
    if crc32fast::hash(&all[..28]) != read_u32(all, 28) {
        return None;
    }
    let count = read_u32(all, 12) as usize;
    if read_u64(all, 16) != all.len() as u64 {
        return None; // truncated or extended
    }
    let table_end = HEADER_LEN.checked_add(count.checked_mul(ENTRY_LEN)?)?;
    if table_end > all.len() || crc32fast::hash(&all[HEADER_LEN..table_end]) != read_u32(all, 24) {
        return None;
    }
    let mut entries = Vec::with_capacity(count);
    for k in 0..count {
        let r = &all[HEADER_LEN + k * ENTRY_LEN..HEADER_LEN + (k + 1) * ENTRY_LEN];
        let oid = ObjectId::try_from(&r[..20]).ok()?;
        let text_start = usize::try_from(read_u64(r, 32)).ok()?;
        let text_len = usize::try_from(read_u64(r, 40)).ok()?;
        let index_start = usize::try_from(read_u64(r, 48)).ok()?;
        let blocks = read_u32(r, 56) as usize;
        let text_end = text_start.checked_add(text_len)?;
        let index_end = index_start.checked_add(blocks.checked_mul(4)?)?;
        if text_start < table_end || text_end > all.len() || index_end > all.len() {
            return None;
        }
        let entry = Entry {
            oid,
            verdict: r[20],
            flags: r[21],
            line_count: read_u32(r, 24),
            crc: read_u32(r, 28),
            text_start,
            text_len,
            index_start,
            blocks,
            sha256: r[64..96].try_into().ok()?,
        };
        if entries.last().is_some_and(|p: &Entry| p.oid >= entry.oid) {
            return None;
        }
        entries.push(entry);
    }
    Some(entries)
}
