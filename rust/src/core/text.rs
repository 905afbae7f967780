//! Decoded source text with one line model shared by every reader.
//!
//! # Decoding
//! A member is text when it is UTF-8, optionally starting with the UTF-8 BOM
//! (`EF BB BF`, dropped), and contains no NUL byte. Otherwise decoding fails
//! with [`CoreError::NulByte`] or [`CoreError::InvalidUtf8`], whichever
//! offending byte comes first; the error carries only that byte offset
//! (counted in the member's raw bytes, BOM included), never content.
//!
//! # Lines
//! A line ends at `\n`, `\r\n` or a lone `\r`; the terminator is not part of
//! the line. A terminator at the very end does not start another line, so
//! `""` has 0 lines, `"a"` and `"a\n"` have 1, `"\n\n"` has 2 empty lines.
//! Line numbers are 1-based. This is Python's universal-newlines model,
//! *not* `str.splitlines()` (which also splits on `\v`, `\f`, U+2028, …).
//!
//! Internally `\r\n` and lone `\r` are rewritten to `\n` once at decode time
//! (only when the member contains a `\r` at all). Line contents are unchanged
//! by that, and every search can then look for a single terminator byte.

use std::sync::{Arc, OnceLock};

use memchr::memchr;

use super::error::{CoreError, CoreResult};
use super::recycle;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Newline counts are kept per block so that "which byte starts line N" is
/// one binary search plus a scan of at most one block.
const INDEX_BLOCK: usize = 4096;

/// Bytes shared by many texts: e.g. one memory-mapped cache file.
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// A text's own buffer, handed back to [`recycle`] when the text is
/// dropped, so that the next batch reuses its pages.
struct OwnedBytes(Vec<u8>);

impl Drop for OwnedBytes {
    fn drop(&mut self) {
        recycle::give(std::mem::take(&mut self.0));
    }
}

/// An empty buffer for `len` bytes, a recycled one when one fits.
fn buffer_for(len: usize) -> Vec<u8> {
    recycle::take(len).unwrap_or_else(|| Vec::with_capacity(len))
}

/// Where a text's bytes live: its own buffer, or a range of shared bytes.
enum Storage {
    Owned(OwnedBytes),
    Shared {
        bytes: SharedBytes,
        start: usize,
        end: usize,
    },
}

impl Storage {
    fn as_slice(&self) -> &[u8] {
        match self {
            Storage::Owned(bytes) => &bytes.0,
            Storage::Shared { bytes, start, end } => &(**bytes).as_ref()[*start..*end],
        }
    }
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the content: diagnostics carry no source text.
        write!(f, "{} bytes", self.as_slice().len())
    }
}

/// What [`SourceText::from_parts`] is given besides the bytes: the facts
/// `decode` found, as a cache stored them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextFacts {
    pub had_bom: bool,
    pub is_ascii: bool,
    pub line_count: usize,
}

#[derive(Debug)]
pub struct SourceText {
    /// UTF-8, BOM removed, every line terminator rewritten to `\n`.
    text: Storage,
    had_bom: bool,
    is_ascii: bool,
    line_count: usize,
    index: OnceLock<LineIndex>,
}

/// A text plus its line index: what a search scans.
#[derive(Clone, Copy)]
pub struct Haystack<'a> {
    pub bytes: &'a [u8],
    pub index: &'a LineIndex,
}

/// Newline counts per block, so that "which line holds byte N" and "where
/// does line N start" cost one binary search plus a scan of one block.
#[derive(Debug)]
pub struct LineIndex {
    /// `blocks[k]` = number of `\n` in `text[..k * INDEX_BLOCK]`.
    blocks: Vec<u32>,
}

impl LineIndex {
    fn build(text: &[u8]) -> Self {
        let mut blocks = Vec::with_capacity(text.len() / INDEX_BLOCK + 2);
        let mut total = 0u32;
        blocks.push(0);
        for block in text.chunks(INDEX_BLOCK) {
            total += count_newlines(block) as u32;
            blocks.push(total);
        }
        LineIndex { blocks }
    }

    /// 0-based line of byte `offset`.
    pub fn line_of(&self, text: &[u8], offset: usize) -> u32 {
        let block = offset / INDEX_BLOCK;
        self.blocks[block] + count_newlines(&text[block * INDEX_BLOCK..offset]) as u32
    }

    /// Byte offset where the 0-based line `index` starts.
    fn line_start(&self, text: &[u8], index: usize) -> usize {
        if index == 0 {
            return 0;
        }
        // The line starts right after newline number `index` (1-based): find
        // the last block whose prefix count is below `index`.
        let block = self.blocks.partition_point(|&n| (n as usize) < index) - 1;
        let mut remaining = index - self.blocks[block] as usize;
        let mut base = block * INDEX_BLOCK;
        // Whole pieces by count first (one `memchr` call per newline of a
        // 4 KiB block cost ~0.5 ms per page of 1,000 hits), then newline
        // by newline in the piece that holds the one sought.
        const PIECE: usize = 256;
        while base + PIECE <= text.len() {
            let count = count_newlines(&text[base..base + PIECE]);
            if count >= remaining {
                break;
            }
            remaining -= count;
            base += PIECE;
        }
        for nl in memchr::memchr_iter(b'\n', &text[base..]) {
            remaining -= 1;
            if remaining == 0 {
                return base + nl + 1;
            }
        }
        text.len()
    }
}

impl SourceText {
    /// Validates and takes ownership of a member's raw bytes.
    pub fn decode(raw: Vec<u8>) -> CoreResult<Self> {
        Self::decode_noting_change(raw, |_| ())
    }

    /// [`Self::decode`], calling `changing(raw)` first when decoding will
    /// change bytes (a BOM removed or a line end rewritten), so that a
    /// caller can still hash the raw bytes; an unchanged text is the raw
    /// bytes themselves.
    pub fn decode_noting_change(raw: Vec<u8>, changing: impl FnOnce(&[u8])) -> CoreResult<Self> {
        let checked = match check_raw(&raw) {
            Ok(checked) => checked,
            Err(err) => {
                recycle::give(raw);
                return Err(err);
            }
        };
        if checked.had_bom || checked.has_cr {
            changing(&raw);
        }
        let mut text = raw;
        if checked.had_bom {
            text.drain(..BOM.len());
        }
        if checked.has_cr {
            let normalized = normalize_line_ends(&text);
            recycle::give(std::mem::replace(&mut text, normalized));
        }
        Ok(Self::from_checked(text, &checked))
    }

    /// Validates `raw` and copies it into a buffer of its own: the same text
    /// as [`Self::decode`], for a reader that reuses one scratch buffer for
    /// every blob (the copy is made once, with the BOM and `\r` already
    /// handled, and no zero-filled buffer per blob).
    pub fn decode_slice(raw: &[u8]) -> CoreResult<Self> {
        Self::decode_slice_noting_change(raw, |_| ())
    }

    /// [`Self::decode_slice`] with the `changing` call of
    /// [`Self::decode_noting_change`].
    pub fn decode_slice_noting_change(
        raw: &[u8],
        changing: impl FnOnce(&[u8]),
    ) -> CoreResult<Self> {
        let checked = check_raw(raw)?;
        if checked.had_bom || checked.has_cr {
            changing(raw);
        }
        let body = &raw[if checked.had_bom { BOM.len() } else { 0 }..];
        let text = if checked.has_cr {
            normalize_line_ends(body)
        } else {
            let mut text = buffer_for(body.len());
            text.extend_from_slice(body);
            text
        };
        Ok(Self::from_checked(text, &checked))
    }

    /// A checked text with BOM removed and line ends normalized (which
    /// changes no byte's ASCII-ness).
    fn from_checked(text: Vec<u8>, checked: &Checked) -> Self {
        // The line index counts every newline once; the line count is its
        // last entry (one pass instead of a count now and an index later).
        let index = LineIndex::build(&text);
        let newlines = index.blocks.last().copied().unwrap_or(0) as usize;
        let line_count = newlines + usize::from(!text.is_empty() && text.last() != Some(&b'\n'));
        SourceText {
            text: Storage::Owned(OwnedBytes(text)),
            had_bom: checked.had_bom,
            is_ascii: checked.is_ascii,
            line_count,
            index: OnceLock::from(index),
        }
    }

    /// A text decoded earlier, from bytes `start..end` of `bytes` and the
    /// facts and line index `decode` produced then (e.g. a cache file).
    /// Only the shape is checked here (range, index length and counts; a
    /// cache checks its own checksums first): a wrong fact can make an
    /// answer wrong, never memory unsafe, and `as_str` still validates.
    pub fn from_parts(
        bytes: SharedBytes,
        start: usize,
        end: usize,
        facts: TextFacts,
        blocks: Vec<u32>,
    ) -> CoreResult<Self> {
        let bad = CoreError::InvalidArgument {
            what: "cached text does not fit its facts",
        };
        let all = (*bytes).as_ref();
        if start > end || end > all.len() || u32::try_from(end - start).is_err() {
            return Err(bad);
        }
        let text = &all[start..end];
        let expected_blocks = 1 + text.len().div_ceil(INDEX_BLOCK);
        let newlines = blocks.last().copied().unwrap_or(0) as usize;
        let line_count = newlines + usize::from(!text.is_empty() && text.last() != Some(&b'\n'));
        if blocks.len() != expected_blocks
            || blocks.first() != Some(&0)
            || blocks.windows(2).any(|w| w[0] > w[1])
            || line_count != facts.line_count
        {
            return Err(bad);
        }
        Ok(SourceText {
            text: Storage::Shared { bytes, start, end },
            had_bom: facts.had_bom,
            is_ascii: facts.is_ascii,
            line_count,
            index: OnceLock::from(LineIndex { blocks }),
        })
    }

    /// The facts [`Self::from_parts`] needs to rebuild this text.
    pub fn facts(&self) -> TextFacts {
        TextFacts {
            had_bom: self.had_bom,
            is_ascii: self.is_ascii,
            line_count: self.line_count,
        }
    }

    /// The line index: newlines before each 4 KiB block (what a cache stores).
    pub fn index_blocks(&self) -> &[u32] {
        &self.haystack().index.blocks
    }

    /// The decoded text with normalized line ends.
    pub fn as_bytes(&self) -> &[u8] {
        self.text.as_slice()
    }

    pub fn as_str(&self) -> &str {
        // Validated in `decode`; normalization only replaces ASCII bytes.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    pub fn line_count(&self) -> usize {
        self.line_count
    }

    pub fn had_bom(&self) -> bool {
        self.had_bom
    }

    pub fn is_ascii(&self) -> bool {
        self.is_ascii
    }

    /// The text as searched by case-sensitive queries.
    pub fn haystack(&self) -> Haystack<'_> {
        Haystack {
            bytes: self.as_bytes(),
            index: self.index.get_or_init(|| LineIndex::build(self.as_bytes())),
        }
    }

    /// Folds the text into `scratch` (see [`fold_case`]) and calls `scan`
    /// with it. The folded copy is not kept: a reused scratch buffer stays
    /// in cache and costs no fresh pages, unlike one stored copy per text.
    pub fn with_folded<R>(&self, scratch: &mut Vec<u8>, scan: impl FnOnce(Haystack<'_>) -> R) -> R {
        fold_case_into(self.as_bytes(), self.is_ascii, scratch);
        if self.is_ascii {
            // ASCII folding keeps every byte offset: the text's index fits.
            let index = self.haystack().index;
            return scan(Haystack {
                bytes: scratch,
                index,
            });
        }
        let index = LineIndex::build(scratch);
        scan(Haystack {
            bytes: scratch,
            index: &index,
        })
    }

    /// Lines `first..=last` (1-based, inclusive) as string slices.
    pub fn lines(&self, first: usize, last: usize) -> CoreResult<Vec<&str>> {
        if first == 0 || last < first || last > self.line_count {
            return Err(CoreError::InvalidArgument {
                what: "line range outside the text",
            });
        }
        let mut start = self.line_start(first - 1);
        let mut out = Vec::with_capacity(last - first + 1);
        for _ in first..=last {
            let text = self.as_bytes();
            let end = memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
            out.push(self.str_range(start, end));
            start = end + 1;
        }
        Ok(out)
    }

    /// One line by 0-based index (callers hold indexes from search hits).
    pub fn line_by_index(&self, index: usize) -> &str {
        let start = self.line_start(index);
        let text = self.as_bytes();
        let end = memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
        self.str_range(start, end)
    }

    fn str_range(&self, start: usize, end: usize) -> &str {
        // Line boundaries sit next to `\n`, always a char boundary.
        let text = self.text.as_slice();
        std::str::from_utf8(&text[start..end]).unwrap_or_default()
    }

    /// Byte offset where the 0-based line `index` starts.
    fn line_start(&self, index: usize) -> usize {
        self.haystack().index.line_start(self.as_bytes(), index)
    }
}

/// What checking a raw member found out, besides that it is text.
struct Checked {
    had_bom: bool,
    is_ascii: bool,
    has_cr: bool,
}

/// Checks a raw member (size, NUL, UTF-8 after an optional BOM).
fn check_raw(raw: &[u8]) -> CoreResult<Checked> {
    if u32::try_from(raw.len()).is_err() {
        // Line indexes are u32; the default per-file limit is 8 MiB.
        return Err(CoreError::InvalidArgument {
            what: "text larger than 4 GiB",
        });
    }
    let had_bom = raw.starts_with(BOM);
    let body_start = if had_bom { BOM.len() } else { 0 };
    let (is_ascii, has_cr) = check_text(&raw[body_start..], body_start)?;
    Ok(Checked {
        had_bom,
        is_ascii,
        has_cr,
    })
}

/// First NUL or invalid UTF-8 byte, whichever comes first; for a valid
/// body, whether it is ASCII and whether it holds a `\r`. Few passes: one
/// `memchr2` finds the first NUL or `\r` (a second looks for a NUL only
/// after a `\r`), and an ASCII body needs no UTF-8 validation.
fn check_text(body: &[u8], offset_base: usize) -> CoreResult<(bool, bool)> {
    let (nul, has_cr) = match memchr::memchr2(0, b'\r', body) {
        None => (None, false),
        Some(p) if body[p] == 0 => (Some(p), false),
        Some(p) => (memchr(0, &body[p..]).map(|q| p + q), true),
    };
    let is_ascii = body.is_ascii();
    let invalid = if is_ascii {
        None
    } else {
        match simdutf8::basic::from_utf8(body) {
            Ok(_) => None,
            Err(_) => Some(match simdutf8::compat::from_utf8(body) {
                Ok(_) => body.len(),
                Err(err) => err.valid_up_to(),
            }),
        }
    };
    let at = |pos: usize| (pos + offset_base) as u64;
    match (nul, invalid) {
        (Some(n), Some(i)) if i < n => Err(CoreError::InvalidUtf8 { offset: at(i) }),
        (Some(n), _) => Err(CoreError::NulByte { offset: at(n) }),
        (None, Some(i)) => Err(CoreError::InvalidUtf8 { offset: at(i) }),
        (None, None) => Ok((is_ascii, has_cr)),
    }
}

fn normalize_line_ends(text: &[u8]) -> Vec<u8> {
    let mut out = buffer_for(text.len());
    let mut rest = text;
    while let Some(i) = memchr(b'\r', rest) {
        out.extend_from_slice(&rest[..i]);
        out.push(b'\n');
        let skip = if rest.get(i + 1) == Some(&b'\n') {
            2
        } else {
            1
        };
        rest = &rest[i + skip..];
    }
    out.extend_from_slice(rest);
    out
}

pub(crate) fn count_newlines(bytes: &[u8]) -> usize {
    bytecount::count(bytes, b'\n')
}

/// Case folding rule for case-insensitive search: every code point is
/// replaced by its Unicode lowercase mapping (full mapping, no context rules;
/// Python's `''.join(c.lower() for c in s)`). `\n` maps to itself, so line
/// numbers of the folded text equal those of the original.
pub fn fold_case(text: &[u8], is_ascii: bool) -> Vec<u8> {
    let mut out = Vec::new();
    fold_case_into(text, is_ascii, &mut out);
    out
}

/// [`fold_case`] into a reused buffer (cleared first).
pub fn fold_case_into(text: &[u8], is_ascii: bool, out: &mut Vec<u8>) {
    out.clear();
    if is_ascii {
        // One pass that lower-cases while copying (vectorized), not a copy
        // and then a second pass over the copy.
        out.extend(text.iter().map(u8::to_ascii_lowercase));
        return;
    }
    out.reserve(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        // Source code is mostly ASCII: lower-case ASCII runs in bulk.
        let run = ascii_prefix_len(rest);
        let start = out.len();
        out.extend_from_slice(&rest[..run]);
        out[start..].make_ascii_lowercase();
        rest = &rest[run..];
        let Some(first) = rest.first() else { break };
        let width = utf8_width(*first);
        let mut buf = [0u8; 4];
        let c = rest
            .get(..width)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .and_then(|s| s.chars().next());
        match c {
            Some(c) => c
                .to_lowercase()
                .for_each(|l| out.extend_from_slice(l.encode_utf8(&mut buf).as_bytes())),
            // Unreachable for validated text; keep the byte rather than panic.
            None => out.push(*first),
        }
        rest = &rest[width.min(rest.len())..];
    }
}

fn ascii_prefix_len(bytes: &[u8]) -> usize {
    const STEP: usize = 32;
    let mut n = 0;
    while n + STEP <= bytes.len() && bytes[n..n + STEP].is_ascii() {
        n += STEP;
    }
    n + bytes[n..]
        .iter()
        .position(|b| !b.is_ascii())
        .unwrap_or(bytes.len() - n)
}

fn utf8_width(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// Cuts `line` to at most `max_chars` Unicode scalar values.
pub fn truncate_chars(line: &str, max_chars: usize) -> (&str, bool) {
    if line.len() <= max_chars {
        return (line, false);
    }
    match line.char_indices().nth(max_chars) {
        Some((cut, _)) => (&line[..cut], true),
        None => (line, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(raw: &[u8]) -> Vec<String> {
        let t = SourceText::decode(raw.to_vec()).unwrap();
        (0..t.line_count())
            .map(|i| t.line_by_index(i).to_string())
            .collect()
    }

    #[test]
    fn decoding_a_slice_equals_decoding_the_buffer() {
        let cases: [&[u8]; 8] = [
            b"",
            b"a\r\nb\rc\n",
            b"\xEF\xBB\xBFx\r\n",
            b"\xEF\xBB\xBF",
            "ä\nß".as_bytes(),
            b"nul\0",
            b"\xff",
            b"\xEF\xBB\xBF\r",
        ];
        for raw in cases {
            match (
                SourceText::decode(raw.to_vec()),
                SourceText::decode_slice(raw),
            ) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a.as_bytes(), b.as_bytes(), "{raw:?}");
                    assert_eq!(a.facts(), b.facts(), "{raw:?}");
                    assert_eq!(a.index_blocks(), b.index_blocks(), "{raw:?}");
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{raw:?}"),
                (a, b) => panic!("{raw:?}: {a:?} vs {b:?}"),
            }
        }
    }

    #[test]
    fn line_model() {
        assert_eq!(lines_of(b""), Vec::<String>::new());
        assert_eq!(lines_of(b"a"), vec!["a"]);
        assert_eq!(lines_of(b"a\n"), vec!["a"]);
        assert_eq!(lines_of(b"\n\n"), vec!["", ""]);
        assert_eq!(lines_of(b"a\r\nb\rc\n\rd"), vec!["a", "b", "c", "", "d"]);
        assert_eq!(lines_of(b"\r"), vec![""]);
        assert_eq!(lines_of(b"x\r\r\n"), vec!["x", ""]);
    }

    #[test]
    fn bom_is_dropped_and_offsets_count_it() {
        let t = SourceText::decode(b"\xEF\xBB\xBFhi".to_vec()).unwrap();
        assert!(t.had_bom());
        assert_eq!(t.as_str(), "hi");
        let err = SourceText::decode(b"\xEF\xBB\xBFab\0".to_vec()).unwrap_err();
        assert_eq!(err, CoreError::NulByte { offset: 5 });
    }

    #[test]
    fn first_offending_byte_wins() {
        assert_eq!(
            SourceText::decode(b"ab\xFFc\0".to_vec()).unwrap_err(),
            CoreError::InvalidUtf8 { offset: 2 }
        );
        assert_eq!(
            SourceText::decode(b"a\0b\xFF".to_vec()).unwrap_err(),
            CoreError::NulByte { offset: 1 }
        );
        // A truncated multi-byte sequence at the end.
        assert_eq!(
            SourceText::decode(b"ok\xE2\x82".to_vec()).unwrap_err(),
            CoreError::InvalidUtf8 { offset: 2 }
        );
    }

    #[test]
    fn line_ranges_across_index_blocks() {
        let raw: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
        let t = SourceText::decode(raw.into_bytes()).unwrap();
        assert_eq!(t.line_count(), 5000);
        assert_eq!(t.lines(4999, 5000).unwrap(), vec!["line 4999", "line 5000"]);
        assert_eq!(t.line_by_index(1234), "line 1235");
        assert!(t.lines(0, 1).is_err());
        assert!(t.lines(3, 2).is_err());
        assert!(t.lines(5000, 5001).is_err());
    }

    #[test]
    fn folding_is_per_code_point() {
        assert_eq!(fold_case("ÄBC".as_bytes(), false), "äbc".as_bytes());
        // Kelvin sign folds to ASCII k; final sigma gets no context rule.
        assert_eq!(fold_case("\u{212A}ΟΣ".as_bytes(), false), "kοσ".as_bytes());
        assert_eq!(fold_case("İ".as_bytes(), false), "i\u{307}".as_bytes());
    }

    #[test]
    fn truncation_counts_chars() {
        assert_eq!(truncate_chars("äöü", 2), ("äö", true));
        assert_eq!(truncate_chars("äöü", 3), ("äöü", false));
        assert_eq!(truncate_chars("abc", 5), ("abc", false));
    }
}
