//! Writing a segment file: the layout, aligned windows, the entry rows.

use super::*;

/// Where every entry goes in a new segment.
pub(super) struct Layout {
    /// Per item (in ID order): text start, index start.
    places: Vec<(u64, u64)>,
    order: Vec<usize>,
    pub(super) file_len: u64,
}

pub(super) fn parts(content: &Content) -> (&[u8], &[u32]) {
    match content {
        Ok(text) => (text.as_bytes(), text.index_blocks()),
        Err(_) => (&[], &[]),
    }
}

pub(super) fn pad8(n: u64) -> u64 {
    n.div_ceil(8) * 8
}

impl Layout {
    pub(super) fn of(items: &[&Fresh]) -> Layout {
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by_key(|&i| items[i].0);
        order.dedup_by_key(|i| items[*i].0);
        let mut at = (HEADER_LEN + order.len() * ENTRY_LEN) as u64;
        let mut places = Vec::with_capacity(order.len());
        for &i in &order {
            let (text, index) = parts(&items[i].1);
            let text_at = at;
            let index_at = pad8(text_at + text.len() as u64);
            at = pad8(index_at + 4 * index.len() as u64);
            places.push((text_at, index_at));
        }
        Layout {
            places,
            order,
            file_len: at,
        }
    }
}

/// Writes a segment in [`WRITE_WINDOW`] windows at offsets that are
/// multiples of it, each assembled in a reused buffer and written with one
/// `pwrite`: the windows without the table by one thread while the pool
/// computes each entry's checksum and, where the writer computes it,
/// SHA-256 (its table row), then the windows holding header and table; a
/// file torn before that fails every check. One large aligned write per window lets
/// the page cache keep the file in folios of that size, which a reader's
/// mapping then maps a whole window per page-table entry (see
/// [`WRITE_WINDOW`]).
pub(super) fn write_segment(path: &Path, items: &[&Fresh], layout: &Layout) -> std::io::Result<()> {
    let file = OpenOptions::new().write(true).create_new(true).open(path)?;
    file.set_len(layout.file_len)?;
    let slots: Vec<(usize, (u64, u64))> = layout
        .order
        .iter()
        .copied()
        .zip(layout.places.iter().copied())
        .collect();
    // Only the windows of the header and table need the checksums: one
    // thread writes the others while the pool hashes (writes to one file
    // take its lock in turn, so a second writing thread only waited,
    // spinning on it).
    let front_len = (HEADER_LEN + layout.order.len() * ENTRY_LEN) as u64;
    let (front_windows, other_windows) = window_split(layout.file_len, front_len);
    let no_front = placed_parts(items, layout, &[]);
    let write = |bytes: &[u8], at: u64| file.write_all_at(bytes, at);
    let (rows, rest) = std::thread::scope(|scope| {
        let rest = scope.spawn(|| write_windows(layout.file_len, &no_front, other_windows, write));
        let rows = parallel_map(&slots, 0, |&(i, place)| entry_row(items[i], place));
        let rest = rest
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (rows, rest)
    });
    rest?;
    let table: Vec<u8> = rows.concat();
    let mut header = [0u8; HEADER_LEN];
    header[..8].copy_from_slice(MAGIC);
    header[8..12].copy_from_slice(&VERSION.to_le_bytes());
    header[12..16].copy_from_slice(&(layout.order.len() as u32).to_le_bytes());
    header[16..24].copy_from_slice(&layout.file_len.to_le_bytes());
    header[24..28].copy_from_slice(&crc32fast::hash(&table).to_le_bytes());
    let header_crc = crc32fast::hash(&header[..28]);
    header[28..32].copy_from_slice(&header_crc.to_le_bytes());
    let front = table_front(&header, &table);
    let placed = placed_parts(items, layout, &front);
    write_windows(layout.file_len, &placed, front_windows, write)
}

/// The windows (by number) that hold the first `front_len` bytes of a
/// file of `file_len` bytes, and the others.
pub(super) fn window_split(file_len: u64, front_len: u64) -> (Range<u64>, Range<u64>) {
    let window = WRITE_WINDOW as u64;
    let all = file_len.div_ceil(window);
    let front = front_len.div_ceil(window).max(1).min(all);
    (0..front, front..all)
}

/// One run of bytes of a new segment at its offset: the front (header and
/// table), a text, or a line index (stored little-endian).
#[derive(Clone, Copy)]
pub(super) struct Placed<'a> {
    at: u64,
    part: Part<'a>,
}

#[derive(Clone, Copy)]
pub(super) enum Part<'a> {
    Bytes(&'a [u8]),
    Words(&'a [u32]),
}

impl Part<'_> {
    pub(super) fn len(&self) -> u64 {
        match self {
            Part::Bytes(bytes) => bytes.len() as u64,
            Part::Words(words) => 4 * words.len() as u64,
        }
    }

    /// Copies the part's bytes from byte `from` on into all of `out`.
    pub(super) fn copy_to(&self, from: usize, out: &mut [u8]) {
        match self {
            Part::Bytes(bytes) => out.copy_from_slice(&bytes[from..from + out.len()]),
            // Line indexes are about 0.1 % of a segment: byte by byte is fine.
            Part::Words(words) => {
                for (k, byte) in out.iter_mut().enumerate() {
                    let at = from + k;
                    *byte = words[at / 4].to_le_bytes()[at % 4];
                }
            }
        }
    }
}

/// Every run of bytes of a new segment, in file order (the gaps between
/// them are padding: zeros).
pub(super) fn placed_parts<'a>(
    items: &[&'a Fresh],
    layout: &Layout,
    front: &'a [u8],
) -> Vec<Placed<'a>> {
    let mut placed = Vec::with_capacity(1 + 2 * layout.order.len());
    placed.push(Placed {
        at: 0,
        part: Part::Bytes(front),
    });
    for (&i, &(text_at, index_at)) in layout.order.iter().zip(&layout.places) {
        let (text, index) = parts(&items[i].1);
        placed.push(Placed {
            at: text_at,
            part: Part::Bytes(text),
        });
        placed.push(Placed {
            at: index_at,
            part: Part::Words(index),
        });
    }
    placed
}

/// Writes the [`WRITE_WINDOW`] windows numbered `windows` of a file of
/// `file_len` bytes made of `placed` (zeros between), one `write(bytes,
/// offset)` each, in order.
pub(super) fn write_windows(
    file_len: u64,
    placed: &[Placed<'_>],
    windows: Range<u64>,
    write: impl Fn(&[u8], u64) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let window = WRITE_WINDOW as u64;
    let mut buf = Vec::new();
    for w in windows {
        let bytes = fill_window(&mut buf, w * window, file_len.min((w + 1) * window), placed);
        write(bytes, w * window)?;
    }
    Ok(())
}

/// The bytes of the file from `start` to `end`, assembled in `buf`.
pub(super) fn fill_window<'b>(
    buf: &'b mut Vec<u8>,
    start: u64,
    end: u64,
    placed: &[Placed<'_>],
) -> &'b [u8] {
    let len = (end - start) as usize;
    if buf.len() < len {
        buf.resize(len, 0);
    }
    let out = &mut buf[..len];
    let mut filled = 0;
    let first = placed.partition_point(|p| p.at + p.part.len() <= start);
    for p in placed[first..].iter().take_while(|p| p.at < end) {
        let from = p.at.max(start);
        let to = (p.at + p.part.len()).min(end);
        let (s, e) = ((from - start) as usize, (to - start) as usize);
        if s >= e {
            continue;
        }
        out[filled..s].fill(0);
        p.part.copy_to((from - p.at) as usize, &mut out[s..e]);
        filled = e;
    }
    out[filled..].fill(0);
    out
}

/// The table row of one entry: the checksum of its text, line index and
/// digest, taking the SHA-256 of the text on the way where the writer
/// computes it (each piece read from memory once for both).
pub(super) fn entry_row(
    (oid, content, digest): &Fresh,
    (text_at, index_at): (u64, u64),
) -> [u8; ENTRY_LEN] {
    let (text, index) = parts(content);
    let mut crc = crc32fast::Hasher::new();
    let mut sha = (content.is_ok() && *digest == RawDigest::TextIsRaw).then(Sha256::new);
    for piece in text.chunks(HASH_CHUNK) {
        crc.update(piece);
        if let Some(sha) = sha.as_mut() {
            sha.update(piece);
        }
    }
    for block in index {
        crc.update(&block.to_le_bytes());
    }
    let sha256: Option<[u8; 32]> = match (content, digest) {
        (Ok(_), RawDigest::Known(known)) => Some(*known),
        (Ok(_), RawDigest::TextIsRaw) => sha.map(|sha| sha.finalize().into()),
        _ => None,
    };
    let (verdict, mut flags, lines) = match content {
        Ok(t) => {
            let f = t.facts();
            let flags =
                if f.had_bom { FLAG_BOM } else { 0 } | if f.is_ascii { FLAG_ASCII } else { 0 };
            (VERDICT_TEXT, flags, f.line_count as u32)
        }
        Err(SkipReason::Binary) => (VERDICT_BINARY, 0, 0),
        Err(_) => (VERDICT_NOT_UTF8, 0, 0),
    };
    if sha256.is_some() {
        flags |= FLAG_SHA256;
    }
    let sha256 = sha256.unwrap_or([0; 32]);
    crc.update(&sha256);
    let mut row = [0u8; ENTRY_LEN];
    row[..20].copy_from_slice(oid.as_bytes());
    row[20] = verdict;
    row[21] = flags;
    row[24..28].copy_from_slice(&lines.to_le_bytes());
    row[28..32].copy_from_slice(&crc.finalize().to_le_bytes());
    row[32..40].copy_from_slice(&text_at.to_le_bytes());
    row[40..48].copy_from_slice(&(text.len() as u64).to_le_bytes());
    row[48..56].copy_from_slice(&index_at.to_le_bytes());
    row[56..60].copy_from_slice(&(index.len() as u32).to_le_bytes());
    row[64..96].copy_from_slice(&sha256);
    row
}

pub(super) fn table_front(header: &[u8; HEADER_LEN], table: &[u8]) -> Vec<u8> {
    let mut front = Vec::with_capacity(HEADER_LEN + table.len());
    front.extend_from_slice(header);
    front.extend_from_slice(table);
    front
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// The file as the naive layout gives it: each part at its offset,
    /// zeros elsewhere.
    fn naive(file_len: u64, placed: &[Placed<'_>]) -> Vec<u8> {
        let mut out = vec![0u8; file_len as usize];
        for p in placed {
            let at = p.at as usize;
            let len = p.part.len() as usize;
            p.part.copy_to(0, &mut out[at..at + len]);
        }
        out
    }

    /// What [`write_segment`] does with the windows: the others first,
    /// without the front, then the front's windows with it. Returns the
    /// file and the writes as (offset, length), in order.
    fn write_like_a_segment(
        file_len: u64,
        front: &[u8],
        rest: &[Placed<'_>],
    ) -> (Vec<u8>, Vec<(u64, u64)>) {
        let image = Mutex::new(vec![0xAAu8; file_len as usize]);
        let calls = Mutex::new(Vec::new());
        let write = |bytes: &[u8], at: u64| {
            calls.lock().unwrap().push((at, bytes.len() as u64));
            image.lock().unwrap()[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
            Ok(())
        };
        let (front_windows, others) = window_split(file_len, front.len() as u64);
        let at_front = |bytes| Placed {
            at: 0,
            part: Part::Bytes(bytes),
        };
        let without: Vec<Placed<'_>> = std::iter::once(at_front(&[]))
            .chain(rest.iter().copied())
            .collect();
        write_windows(file_len, &without, others, write).unwrap();
        let with: Vec<Placed<'_>> = std::iter::once(at_front(front))
            .chain(rest.iter().copied())
            .collect();
        write_windows(file_len, &with, front_windows, write).unwrap();
        let expected = naive(file_len, &with);
        assert_eq!(image.into_inner().unwrap(), expected);
        (expected, calls.into_inner().unwrap())
    }

    /// Before issue 16's change each text was written at its place; the
    /// page cache then kept small folios and a new process paid a page
    /// fault per 4 KiB. Now every write is a whole aligned window (the last
    /// one ends the file), the windows of the front are written last, and
    /// the bytes are those of the layout, also for parts that cross a
    /// window.
    #[test]
    fn segments_are_written_as_whole_aligned_windows_front_last() {
        let w = WRITE_WINDOW as u64;
        let front = vec![7u8; 1000];
        let big = vec![b'x'; 2 * WRITE_WINDOW + 123];
        let words: Vec<u32> = (0..3000u32).map(|n| n.wrapping_mul(0x0101_0101)).collect();
        let small = b"abc".to_vec();
        // A text across two window boundaries, an index across one at an
        // offset that is not a multiple of 4, an empty part, zero gaps.
        let rest = vec![
            Placed {
                at: 1008,
                part: Part::Bytes(&big),
            },
            Placed {
                at: 3 * w - 6,
                part: Part::Words(&words),
            },
            Placed {
                at: 3 * w + 20_000,
                part: Part::Bytes(&[]),
            },
            Placed {
                at: 3 * w + 20_000,
                part: Part::Bytes(&small),
            },
        ];
        let file_len = 3 * w + 20_008;
        let (_, calls) = write_like_a_segment(file_len, &front, &rest);
        assert_eq!(calls.last(), Some(&(0, w)), "the front window goes last");
        let mut sorted = calls.clone();
        sorted.sort_unstable();
        let expected: Vec<(u64, u64)> = vec![(0, w), (w, w), (2 * w, w), (3 * w, 20_008)];
        assert_eq!(sorted, expected);
    }

    /// A table of more than 2 MiB (over 21,000 entries) spans several
    /// windows: all of them are written with it, after the checksums.
    #[test]
    fn a_front_of_several_windows_is_written_whole() {
        let w = WRITE_WINDOW as u64;
        let front: Vec<u8> = (0..(2 * WRITE_WINDOW + 500))
            .map(|n| (n % 251) as u8)
            .collect();
        let text = vec![b't'; 10_000];
        let rest = vec![Placed {
            at: 2 * w + 504,
            part: Part::Bytes(&text),
        }];
        let file_len = 2 * w + 10_504;
        let (image, calls) = write_like_a_segment(file_len, &front, &rest);
        assert_eq!(&image[..front.len()], &front[..]);
        assert_eq!(calls, vec![(0, w), (w, w), (2 * w, 10_504)]);
        assert_eq!(window_split(file_len, front.len() as u64), (0..3, 3..3));
        assert_eq!(window_split(10, 64), (0..1, 1..1));
        assert_eq!(window_split(3 * w, 64), (0..1, 1..3));
    }

    /// A new process maps the segments while it lists the commit, before
    /// its first search asks for them.
    #[test]
    fn segments_are_mapped_at_open_without_a_search() {
        let dir = std::env::temp_dir().join(format!("vba-disk-prescan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let text = Arc::new(SourceText::decode(b"one\ntwo\n".to_vec()).unwrap());
        let oid = ObjectId::from_bytes_or_panic(&[3; 20]);
        let first = DiskCache::open(&dir, 1 << 20).unwrap();
        first.store_now(&[(oid, Ok(text), RawDigest::Unknown)]);
        let second = DiskCache::open(&dir, 1 << 20).unwrap();
        second.flush(); // the scan thread is done
        let state = second.state.lock().unwrap();
        assert_eq!(state.segments.len(), 1);
        assert!(state.by_oid.contains_key(&oid));
        drop(state);
        assert!(second.find(&[oid])[0].is_some());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failed_window_write_fails_the_segment() {
        let front = vec![1u8; 10];
        let placed = vec![Placed {
            at: 0,
            part: Part::Bytes(&front),
        }];
        let len = 2 * WRITE_WINDOW as u64;
        let got = write_windows(len, &placed, 0..2, |_, at| {
            if at == 0 {
                Ok(())
            } else {
                Err(std::io::Error::other("disk full"))
            }
        });
        assert!(got.is_err());
    }
}
