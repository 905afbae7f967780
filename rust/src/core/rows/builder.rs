//! Parsing: [`Builder`] turns a member into the cells, columns and row ends
//! of a [`Built`] index in one pass over the [`Scanner`].

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::core::error::{CoreError, CoreResult};

use super::scanner::{push_json_string, unescape_into, Scanner, Token};
use super::{pack_span, too_deep, Cell, SnapshotKind, Tag, MAX_DEPTH};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// "No column" in [`Builder`]'s key predictions.
const NO_COLUMN: u32 = u32::MAX;

/// Objects with more keys than this switch duplicate detection from a linear
/// scan to a hash set.
const LINEAR_KEY_SCAN: usize = 16;

/// What [`Builder::build`] produces; the snapshot adds the member.
pub(super) struct Built {
    pub(super) arena: String,
    pub(super) columns: Vec<Box<str>>,
    pub(super) column_ids: HashMap<Box<str>, u32>,
    pub(super) cells: Vec<Cell>,
    pub(super) row_ends: Vec<u32>,
    pub(super) kind: SnapshotKind,
    pub(super) has_rows: bool,
    pub(super) header_json: Option<String>,
}

/// Single pass over the member: rows become cells, everything else is
/// validated (syntax, duplicate keys at any depth, nesting depth).
pub(super) struct Builder<'j> {
    scanner: Scanner<'j>,
    arena: String,
    columns: Vec<Box<str>>,
    /// Names of the columns that need no escaping, so that raw key text
    /// can be compared with them directly; `plain_keys[column]` is the span.
    key_text: Vec<u8>,
    plain_keys: Vec<Option<(u32, u32)>>,
    /// Per key position in a row: the column last seen there and its plain
    /// name span (`NO_COLUMN` if none or not plain). Rows of one table
    /// repeat their keys in the same order.
    expected: Vec<(u32, u32, u32)>,
    column_ids: HashMap<Box<str>, u32>,
    /// Per column: 1 + the last row that had it (duplicate detection).
    last_row: Vec<u32>,
    cells: Vec<Cell>,
    row_ends: Vec<u32>,
    open_keys: OpenKeys,
    /// The first shape error (a row that is not an object, `rows` that is
    /// not an array). Reported only once the whole member is known to be
    /// valid JSON, so invalid JSON always wins, as with `json.loads` first.
    shape_error: Option<CoreError>,
}

impl<'j> Builder<'j> {
    pub(super) fn build(member: &'j [u8]) -> CoreResult<Built> {
        if u32::try_from(member.len()).is_err() {
            return Err(CoreError::ByteLimitExceeded {
                limit: u64::from(u32::MAX),
            });
        }
        let text = match simdutf8::basic::from_utf8(member) {
            Ok(text) => text,
            Err(_) => {
                // Re-run the slower validator only to find the offset.
                let valid_up_to = simdutf8::compat::from_utf8(member)
                    .err()
                    .map_or(0, |e| e.valid_up_to());
                return Err(CoreError::RowsInvalidJson {
                    offset: valid_up_to as u64,
                });
            }
        };
        let start = if member.starts_with(UTF8_BOM) {
            UTF8_BOM.len()
        } else {
            0
        };
        let mut builder = Builder {
            scanner: Scanner::new(text, start),
            arena: String::new(),
            columns: Vec::new(),
            key_text: Vec::new(),
            plain_keys: Vec::new(),
            expected: Vec::new(),
            column_ids: HashMap::new(),
            last_row: Vec::new(),
            cells: Vec::new(),
            row_ends: Vec::new(),
            open_keys: OpenKeys::default(),
            shape_error: None,
        };
        let (kind, has_rows, header_json) = builder.parse_member()?;
        if let Some(error) = builder.shape_error {
            return Err(error);
        }
        // Give back a reservation that guessed too high.
        if builder.cells.capacity() - builder.cells.len() > builder.cells.len() / 4 {
            builder.cells.shrink_to_fit();
        }
        if builder.row_ends.capacity() - builder.row_ends.len() > builder.row_ends.len() / 4 {
            builder.row_ends.shrink_to_fit();
        }
        Ok(Built {
            arena: builder.arena,
            columns: builder.columns,
            column_ids: builder.column_ids,
            cells: builder.cells,
            row_ends: builder.row_ends,
            kind,
            has_rows,
            header_json,
        })
    }

    /// The top-level value: returns (kind, has_rows, header_json).
    fn parse_member(&mut self) -> CoreResult<(SnapshotKind, bool, Option<String>)> {
        let result = match self.scanner.peek_value()? {
            b'[' => {
                self.parse_rows(0)?;
                (SnapshotKind::Array, true, None)
            }
            b'{' => {
                let (has_rows, header) = self.parse_document()?;
                (SnapshotKind::Document, has_rows, Some(header))
            }
            _ => {
                self.skip_value(0)?;
                self.shape_error = Some(CoreError::RowsBadShape {
                    what: "top-level value is neither an array nor an object",
                });
                (SnapshotKind::Array, false, None)
            }
        };
        self.scanner.finish()?;
        Ok(result)
    }

    /// The top-level object: `rows` is parsed as rows, every other member
    /// is validated and copied verbatim into the header object.
    fn parse_document(&mut self) -> CoreResult<(bool, String)> {
        let mut header = String::from("{");
        let mut has_rows = false;
        let mut keys = self.open_keys.open();
        if self.scanner.open_container(b'}')? {
            loop {
                let key_at = self.scanner.expect_key()?;
                let name = self.scanner.key()?;
                if !self.open_keys.insert(&mut keys, &name) {
                    return Err(CoreError::RowsDuplicateKey {
                        offset: key_at as u64,
                    });
                }
                self.scanner.expect_colon()?;
                if name == "rows" {
                    if self.scanner.peek_value()? == b'[' {
                        self.parse_rows(1)?;
                    } else {
                        self.skip_value(1)?;
                        self.shape_error.get_or_insert(CoreError::RowsBadShape {
                            what: "the rows member is not an array",
                        });
                    }
                    has_rows = true;
                } else {
                    if header.len() > 1 {
                        header.push(',');
                    }
                    push_json_string(&mut header, &name);
                    header.push(':');
                    let start = self.scanner.value_start()?;
                    self.skip_value(1)?;
                    header.push_str(&self.scanner.text[start..self.scanner.pos]);
                }
                if !self.scanner.next_member(b'}')? {
                    break;
                }
            }
        }
        self.open_keys.close(&keys);
        header.push('}');
        Ok((has_rows, header))
    }

    /// The rows array, the value at nesting `depth` (0 at top level).
    fn parse_rows(&mut self, depth: usize) -> CoreResult<()> {
        if !self.scanner.open_container(b']')? {
            return Ok(());
        }
        let mut index = 0u64;
        loop {
            if self.scanner.peek_value()? == b'{' {
                let row_start = self.scanner.pos;
                self.parse_row(depth + 1)?;
                if index == 0 {
                    self.reserve_like_first_row(self.scanner.pos - row_start);
                }
            } else {
                self.skip_value(depth + 1)?;
                self.shape_error
                    .get_or_insert(CoreError::RowsNotObject { index });
            }
            index += 1;
            if !self.scanner.next_member(b']')? {
                return Ok(());
            }
        }
    }

    /// Size the cell vector once from the first row, instead of growing it
    /// by doubling (copies, and page faults on memory used only briefly).
    /// A guess that is too high costs address space only: untouched pages
    /// are never mapped.
    fn reserve_like_first_row(&mut self, row_bytes: usize) {
        let cells = self.cells.len();
        if cells == 0 {
            // An empty first row says nothing about the others.
            return;
        }
        // Each cell takes at least 5 bytes (`"":0,`), so this stays below
        // one cell per 5 bytes of member.
        let rows = self.scanner.bytes.len() / row_bytes.max(1);
        let expected = rows.saturating_mul(cells);
        self.cells.reserve(expected + expected / 8);
        self.row_ends.reserve(rows + rows / 8);
    }

    /// One row object at nesting `depth`. Keys become column ids; the key
    /// last seen at the same position is tried first, so a uniform table
    /// costs one short compare per key.
    fn parse_row(&mut self, depth: usize) -> CoreResult<()> {
        // Row numbers stay below u32::MAX: each row takes at least 2 bytes.
        let stamp = self.row_ends.len() as u32 + 1;
        if self.scanner.open_container(b'}')? {
            let mut position = 0;
            loop {
                let key_at = self.scanner.expect_key()?;
                let column = self.row_key(position)?;
                let seen = &mut self.last_row[column as usize];
                if *seen == stamp {
                    return Err(CoreError::RowsDuplicateKey {
                        offset: key_at as u64,
                    });
                }
                *seen = stamp;
                self.scanner.expect_colon()?;
                let (tag, bits) = self.parse_cell(depth + 1)?;
                self.cells.push(Cell { bits, column, tag });
                position += 1;
                if !self.scanner.next_member(b'}')? {
                    break;
                }
            }
        }
        self.row_ends.push(self.cells.len() as u32);
        Ok(())
    }

    /// The column of the key at the scanner (on its `"`), the key number
    /// `position` of its row.
    fn row_key(&mut self, position: usize) -> CoreResult<u32> {
        if let Some(&(column, start, len)) = self.expected.get(position) {
            let name = &self.key_text[start as usize..(start + len) as usize];
            if column != NO_COLUMN && self.scanner.take_plain_string(name) {
                return Ok(column);
            }
        }
        let name = self.scanner.key()?;
        let column = match self.column_ids.get(&*name) {
            Some(&column) => column,
            None => {
                let column = self.columns.len() as u32;
                let plain = !name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20);
                self.plain_keys.push(plain.then(|| {
                    let start = self.key_text.len() as u32;
                    self.key_text.extend_from_slice(name.as_bytes());
                    (start, name.len() as u32)
                }));
                self.columns.push((*name).into());
                self.column_ids.insert(name.into(), column);
                self.last_row.push(0);
                column
            }
        };
        let expected = match self.plain_keys[column as usize] {
            Some((start, len)) => (column, start, len),
            None => (NO_COLUMN, 0, 0),
        };
        match self.expected.get_mut(position) {
            Some(slot) => *slot = expected,
            None => self.expected.push(expected),
        }
        Ok(column)
    }

    /// One cell value at nesting `depth`.
    fn parse_cell(&mut self, depth: usize) -> CoreResult<(Tag, u64)> {
        let start = self.scanner.value_start()?;
        Ok(match self.scanner.bytes[start] {
            b'"' => {
                let (span, escaped) = self.scanner.string()?;
                if escaped {
                    let offset = self.arena.len();
                    unescape_into(&mut self.arena, &self.scanner.text[span]);
                    (Tag::EscapedStr, pack_span(offset..self.arena.len()))
                } else {
                    (Tag::Str, pack_span(span))
                }
            }
            b'[' | b'{' => {
                self.skip_value(depth)?;
                (Tag::Nested, pack_span(start..self.scanner.pos))
            }
            _ => match self.scanner.scalar()? {
                Token::Null => (Tag::Null, 0),
                Token::Bool(flag) => (Tag::Bool, u64::from(flag)),
                Token::Int(value) => (Tag::Int, value as u64),
                Token::BigInt(span) => (Tag::BigInt, pack_span(span)),
                Token::Float(value) => (Tag::Float, value.to_bits()),
            },
        })
    }

    /// Validate one value at nesting `depth` without storing it.
    fn skip_value(&mut self, depth: usize) -> CoreResult<()> {
        match self.scanner.peek_value()? {
            b'"' => self.scanner.string().map(drop),
            b'[' => {
                if depth >= MAX_DEPTH {
                    return Err(too_deep());
                }
                if self.scanner.open_container(b']')? {
                    loop {
                        self.skip_value(depth + 1)?;
                        if !self.scanner.next_member(b']')? {
                            break;
                        }
                    }
                }
                Ok(())
            }
            b'{' => {
                if depth >= MAX_DEPTH {
                    return Err(too_deep());
                }
                let mut keys = self.open_keys.open();
                if self.scanner.open_container(b'}')? {
                    loop {
                        let key_at = self.scanner.expect_key()?;
                        let name = self.scanner.key()?;
                        if !self.open_keys.insert(&mut keys, &name) {
                            return Err(CoreError::RowsDuplicateKey {
                                offset: key_at as u64,
                            });
                        }
                        self.scanner.expect_colon()?;
                        self.skip_value(depth + 1)?;
                        if !self.scanner.next_member(b'}')? {
                            break;
                        }
                    }
                }
                self.open_keys.close(&keys);
                Ok(())
            }
            _ => self.scanner.scalar().map(drop),
        }
    }
}

/// Keys of the objects open while walking nested values and the document
/// header, for duplicate detection. A stack: an object's keys are dropped
/// when it closes.
#[derive(Default)]
struct OpenKeys {
    text: String,
    spans: Vec<Range<usize>>,
}

/// One open object: where its keys start on the [`OpenKeys`] stack, or a
/// hash set once it has many keys.
struct ObjectKeys {
    text_start: usize,
    spans_start: usize,
    many: Option<HashSet<Box<str>>>,
}

impl OpenKeys {
    fn open(&self) -> ObjectKeys {
        ObjectKeys {
            text_start: self.text.len(),
            spans_start: self.spans.len(),
            many: None,
        }
    }

    /// Record `key` for the innermost open object; false if it has it.
    fn insert(&mut self, object: &mut ObjectKeys, key: &str) -> bool {
        if let Some(set) = &mut object.many {
            return set.insert(key.into());
        }
        let own = &self.spans[object.spans_start..];
        if own.iter().any(|span| &self.text[span.clone()] == key) {
            return false;
        }
        if own.len() < LINEAR_KEY_SCAN {
            let start = self.text.len();
            self.text.push_str(key);
            self.spans.push(start..self.text.len());
        } else {
            let mut set: HashSet<Box<str>> = own
                .iter()
                .map(|span| self.text[span.clone()].into())
                .collect();
            set.insert(key.into());
            object.many = Some(set);
            self.close(object);
        }
        true
    }

    fn close(&mut self, object: &ObjectKeys) {
        self.text.truncate(object.text_start);
        self.spans.truncate(object.spans_start);
    }
}
