//! Typed row snapshots: one JSON member holding database rows, parsed once
//! and then queried by exact typed equality.
//!
//! A member is either a raw array of row objects or a
//! `viano-database-snapshot` document, an object whose `rows` member is that
//! array. The document's other members are kept as raw JSON text (the header)
//! for the Python layer to validate.
//!
//! Layout: the member bytes are kept once (shared with the caller when it can
//! lend them, see [`RowSnapshot::parse`]); every cell is a 16-byte [`Cell`]
//! (column id, type tag, 8-byte payload). Integers, floats and bools live in
//! the payload; strings without escapes, big integers and nested
//! arrays/objects are byte ranges into the member; only strings with escapes
//! are decoded into a side arena. Parsing allocates nothing per cell, and a
//! row is a range of the cell vector.
//!
//! Equality is strict and typed, like Python's `type(a) is type(b) and
//! a == b` over `json.loads` output: `true`, `1`, `"1"` and `1.0` all differ;
//! a JSON number is a float iff its text has `.`, `e` or `E`; floats compare
//! as f64 (`1.0 == 1e0`, `-0.0 == 0.0`, `1e400` is infinity); integers are
//! exact at any size (`-0 == 0`). Nested values never equal a scalar.
//!
//! The JSON scanner is our own rather than jiter's iterator: rows of one
//! table repeat their keys in the same order, and only a scanner that owns
//! its position can confirm a predicted key with one compare instead of
//! scanning it as a string. Measured on the snapshot of
//! `benches/bench_rows.py` (100,000 rows x 12 columns, 25 MB), the same
//! builder on jiter's `Jiter` API took ~81 ms against ~46 ms here (jiter's
//! bare `next_skip` over the member alone takes ~40 ms).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::core::error::{CoreError, CoreResult};

/// Deepest array/object nesting accepted, counted from the top-level value.
/// Python's own `json` gives up near its recursion limit (~1000); row data
/// from a database is never close to this.
pub const MAX_DEPTH: usize = 512;

/// Python refuses to convert integers with more digits than this
/// (`sys.get_int_max_str_digits()`), so `json.loads` rejects them too.
const MAX_INT_DIGITS: usize = 4300;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// "No column" in [`Builder`]'s key predictions.
const NO_COLUMN: u32 = u32::MAX;

/// Objects with more keys than this switch duplicate detection from a linear
/// scan to a hash set.
const LINEAR_KEY_SCAN: usize = 16;

/// Which shape the member had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotKind {
    /// A top-level array of row objects.
    Array,
    /// A top-level object (header members plus an optional `rows` array).
    Document,
}

impl SnapshotKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotKind::Array => "array",
            SnapshotKind::Document => "document",
        }
    }
}

/// A typed scalar given by the caller: the value a query looks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer outside `i64`, as normalized decimal text (build it with
    /// [`Scalar::integer`]).
    BigInt(Box<str>),
    Float(f64),
    Str(Box<str>),
}

impl Scalar {
    /// An integer of any size from decimal text (`-?[0-9]+`): `Int` when it
    /// fits in `i64`, otherwise `BigInt` with leading zeros stripped.
    pub fn integer(text: &str) -> CoreResult<Scalar> {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(CoreError::InvalidArgument {
                what: "integer text is not decimal",
            });
        }
        let significant = digits.trim_start_matches('0');
        if let Some(value) = parse_i64(negative, significant.as_bytes()) {
            return Ok(Scalar::Int(value));
        }
        let sign = if negative { "-" } else { "" };
        Ok(Scalar::BigInt(
            format!("{sign}{significant}").into_boxed_str(),
        ))
    }
}

/// A stored cell, borrowed from the snapshot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CellValue<'s> {
    Null,
    Bool(bool),
    Int(i64),
    /// Decimal text of an integer outside `i64` (normalized, as in the JSON).
    BigInt(&'s str),
    Float(f64),
    /// The decoded string.
    Str(&'s str),
    /// A nested array or object, as its raw JSON text (see [`decode_nested`]).
    Nested(&'s str),
}

/// A fully decoded JSON value, used to hand nested cells to a caller.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonTree {
    Null,
    Bool(bool),
    Int(i64),
    BigInt(String),
    Float(f64),
    Str(String),
    Array(Vec<JsonTree>),
    /// Members in document order (keys are unique: the parser checked).
    Object(Vec<(String, JsonTree)>),
}

/// One matching row of a query page.
#[derive(Debug, Clone, PartialEq)]
pub struct RowMatch<'s> {
    /// Index of the row in the `rows` array (for a JSON Pointer).
    pub index: usize,
    /// For a reference search: the search columns holding the value, in the
    /// caller's order. Empty for a lookup.
    pub matched: Vec<&'s str>,
    /// The projected fields: requested columns the row has, in requested
    /// order, or every field in row order.
    pub fields: Vec<(&'s str, CellValue<'s>)>,
}

/// A page of query results.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<'s> {
    /// How many rows match in total (not only on this page).
    pub total: usize,
    /// Matches `offset..offset + limit`, in row order.
    pub rows: Vec<RowMatch<'s>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Tag {
    Null,
    Bool,
    Int,
    Float,
    /// Payload: span into the member (the string had no escapes).
    Str,
    /// Payload: span into the arena (decoded from a string with escapes).
    EscapedStr,
    /// Payload: span into the member (normalized decimal text).
    BigInt,
    /// Payload: span into the member (raw JSON array or object).
    Nested,
}

/// One field of one row. `bits` holds the bool, the i64, the f64 bits or a
/// span packed as `start << 32 | len`.
#[derive(Debug, Clone, Copy)]
struct Cell {
    bits: u64,
    column: u32,
    tag: Tag,
}

const _: () = assert!(std::mem::size_of::<Cell>() == 16);

fn pack_span(span: Range<usize>) -> u64 {
    // The member is at most u32::MAX bytes (checked in `parse`), and so is
    // the arena, which only holds strings shorter than their escaped form.
    ((span.start as u64) << 32) | span.len() as u64
}

fn unpack_span(bits: u64) -> Range<usize> {
    let start = (bits >> 32) as usize;
    start..start + (bits & 0xFFFF_FFFF) as usize
}

/// The bytes of a member, owned or lent by the caller (never mutated).
type Member = Box<dyn AsRef<[u8]> + Send + Sync>;

/// A parsed, immutable row snapshot.
pub struct RowSnapshot {
    member: Member,
    /// Strings that had escapes, decoded.
    arena: Box<str>,
    /// Column names in first-seen order; a column id indexes this.
    columns: Vec<Box<str>>,
    column_ids: HashMap<Box<str>, u32>,
    cells: Vec<Cell>,
    /// Row `i` is `cells[row_ends[i - 1]..row_ends[i]]`.
    row_ends: Vec<u32>,
    kind: SnapshotKind,
    has_rows: bool,
    header_json: Option<String>,
}

impl std::fmt::Debug for RowSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Counts only: never row values.
        f.debug_struct("RowSnapshot")
            .field("kind", &self.kind)
            .field("rows", &self.row_ends.len())
            .field("columns", &self.columns.len())
            .finish_non_exhaustive()
    }
}

impl RowSnapshot {
    /// Parse a whole member (see the module documentation for the shapes).
    /// The snapshot keeps `member` and refers into it by offset, so a caller
    /// that owns the bytes elsewhere (a Python `bytes`) can lend them without
    /// a copy. `member.as_ref()` must return the same bytes every time.
    pub fn parse<M: AsRef<[u8]> + Send + Sync + 'static>(member: M) -> CoreResult<RowSnapshot> {
        let built = Builder::build(member.as_ref())?;
        Ok(RowSnapshot {
            member: Box::new(member),
            arena: built.arena.into_boxed_str(),
            columns: built.columns,
            column_ids: built.column_ids,
            cells: built.cells,
            row_ends: built.row_ends,
            kind: built.kind,
            has_rows: built.has_rows,
            header_json: built.header_json,
        })
    }

    pub fn kind(&self) -> SnapshotKind {
        self.kind
    }

    pub fn row_count(&self) -> usize {
        self.row_ends.len()
    }

    /// False only for a document without a `rows` member.
    pub fn has_rows(&self) -> bool {
        self.has_rows
    }

    /// The document's members other than `rows`, as one JSON object text
    /// (values verbatim). `None` for a raw array.
    pub fn header_json(&self) -> Option<&str> {
        self.header_json.as_deref()
    }

    /// Column names seen in at least one row, in first-seen order.
    pub fn columns(&self) -> impl ExactSizeIterator<Item = &str> {
        self.columns.iter().map(|name| &**name)
    }

    pub fn has_column(&self, name: &str) -> bool {
        self.column_ids.contains_key(name)
    }

    /// Bytes held besides the member itself: cells, row ends, arena and
    /// column names (approximate: without hash map overhead).
    pub fn index_size(&self) -> usize {
        self.arena.len()
            + self.cells.capacity() * std::mem::size_of::<Cell>()
            + self.row_ends.capacity() * std::mem::size_of::<u32>()
            + self.columns.iter().map(|c| 2 * c.len()).sum::<usize>()
    }

    /// Rows where every `(column, value)` filter holds (AND), paged.
    pub fn lookup(
        &self,
        filters: &[(&str, Scalar)],
        columns: Option<&[&str]>,
        offset: usize,
        limit: usize,
    ) -> CoreResult<Page<'_>> {
        if filters.is_empty() {
            return Err(CoreError::InvalidArgument {
                what: "filters must not be empty",
            });
        }
        let projection = columns.map(|names| self.known_columns(names));
        let mut resolved = Vec::with_capacity(filters.len());
        for (name, value) in filters {
            match self.column_ids.get(*name) {
                Some(&column) => resolved.push((column, Needle::new(value))),
                // A column no row has can never match.
                None => {
                    return Ok(Page {
                        total: 0,
                        rows: Vec::new(),
                    })
                }
            }
        }
        let member = self.member();
        let mut hints = vec![0usize; resolved.len()];
        let (total, indices) = self.scan(offset, limit, |cells| {
            resolved
                .iter()
                .zip(hints.iter_mut())
                .all(|((column, needle), hint)| {
                    find_cell(cells, *column, hint)
                        .is_some_and(|cell| self.cell_equals(member, cell, needle))
                })
        });
        let rows = indices
            .into_iter()
            .map(|index| RowMatch {
                index,
                matched: Vec::new(),
                fields: self.fields(index, projection.as_deref()),
            })
            .collect();
        Ok(Page { total, rows })
    }

    /// Rows where `value` occurs in at least one of `search_columns`, paged,
    /// with the columns that hold it. Repeated search columns count once.
    pub fn find_references(
        &self,
        value: &Scalar,
        search_columns: &[&str],
        columns: Option<&[&str]>,
        offset: usize,
        limit: usize,
    ) -> CoreResult<Page<'_>> {
        if search_columns.is_empty() {
            return Err(CoreError::InvalidArgument {
                what: "search_columns must not be empty",
            });
        }
        let projection = columns.map(|names| self.known_columns(names));
        let searched = self.known_columns(search_columns);
        let needle = Needle::new(value);
        let member = self.member();
        let mut hints = vec![0usize; searched.len()];
        let (total, indices) = self.scan(offset, limit, |cells| {
            searched.iter().zip(hints.iter_mut()).any(|(column, hint)| {
                find_cell(cells, *column, hint)
                    .is_some_and(|cell| self.cell_equals(member, cell, &needle))
            })
        });
        let rows = indices
            .into_iter()
            .map(|index| {
                let cells = self.row_cells(index);
                let matched = searched
                    .iter()
                    .filter(|&&column| {
                        find_cell(cells, column, &mut 0)
                            .is_some_and(|cell| self.cell_equals(member, cell, &needle))
                    })
                    .map(|&column| &*self.columns[column as usize])
                    .collect();
                RowMatch {
                    index,
                    matched,
                    fields: self.fields(index, projection.as_deref()),
                }
            })
            .collect();
        Ok(Page { total, rows })
    }

    /// Visit every row; count those `matches` accepts and keep the indices
    /// of matches number `offset..offset + limit`.
    fn scan(
        &self,
        offset: usize,
        limit: usize,
        mut matches: impl FnMut(&[Cell]) -> bool,
    ) -> (usize, Vec<usize>) {
        let end = offset.saturating_add(limit);
        let mut total = 0usize;
        let mut page = Vec::new();
        let mut start = 0usize;
        for (index, &row_end) in self.row_ends.iter().enumerate() {
            let row_end = row_end as usize;
            if matches(&self.cells[start..row_end]) {
                if total >= offset && total < end {
                    page.push(index);
                }
                total += 1;
            }
            start = row_end;
        }
        (total, page)
    }

    fn row_cells(&self, index: usize) -> &[Cell] {
        let start = if index == 0 {
            0
        } else {
            self.row_ends[index - 1] as usize
        };
        &self.cells[start..self.row_ends[index] as usize]
    }

    /// Ids of the named columns that exist, first occurrence only, in order.
    fn known_columns(&self, names: &[&str]) -> Vec<u32> {
        let mut ids: Vec<u32> = Vec::with_capacity(names.len());
        for name in names {
            if let Some(&column) = self.column_ids.get(*name) {
                if !ids.contains(&column) {
                    ids.push(column);
                }
            }
        }
        ids
    }

    fn fields(&self, index: usize, projection: Option<&[u32]>) -> Vec<(&str, CellValue<'_>)> {
        let cells = self.row_cells(index);
        let field = |cell: &Cell| (&*self.columns[cell.column as usize], self.cell_value(cell));
        match projection {
            None => cells.iter().map(field).collect(),
            Some(columns) => {
                let mut hint = 0;
                columns
                    .iter()
                    .filter_map(|&column| find_cell(cells, column, &mut hint))
                    .map(field)
                    .collect()
            }
        }
    }

    fn member(&self) -> &[u8] {
        (*self.member).as_ref()
    }

    /// `member` is [`Self::member`], fetched once per query.
    fn cell_equals(&self, member: &[u8], cell: &Cell, needle: &Needle<'_>) -> bool {
        match *needle {
            Needle::Bits(tag, bits) => cell.tag == tag && cell.bits == bits,
            Needle::Float(value) => cell.tag == Tag::Float && f64::from_bits(cell.bits) == value,
            Needle::Text(text) => match cell.tag {
                Tag::Str => &member[unpack_span(cell.bits)] == text,
                Tag::EscapedStr => &self.arena.as_bytes()[unpack_span(cell.bits)] == text,
                _ => false,
            },
            Needle::BigInt(digits) => {
                cell.tag == Tag::BigInt && &member[unpack_span(cell.bits)] == digits
            }
        }
    }

    fn cell_value(&self, cell: &Cell) -> CellValue<'_> {
        match cell.tag {
            Tag::Null => CellValue::Null,
            Tag::Bool => CellValue::Bool(cell.bits != 0),
            Tag::Int => CellValue::Int(cell.bits as i64),
            Tag::Float => CellValue::Float(f64::from_bits(cell.bits)),
            Tag::Str => CellValue::Str(self.member_text(cell.bits)),
            Tag::EscapedStr => CellValue::Str(&self.arena[unpack_span(cell.bits)]),
            Tag::BigInt => CellValue::BigInt(self.member_text(cell.bits)),
            Tag::Nested => CellValue::Nested(self.member_text(cell.bits)),
        }
    }

    fn member_text(&self, bits: u64) -> &str {
        std::str::from_utf8(&self.member()[unpack_span(bits)])
            .expect("member was validated as UTF-8 when parsed and is immutable")
    }
}

/// A query value in the form cells are compared with.
enum Needle<'a> {
    /// Null, bool and i64 cells are equal iff tag and payload are.
    Bits(Tag, u64),
    Float(f64),
    Text(&'a [u8]),
    BigInt(&'a [u8]),
}

impl<'a> Needle<'a> {
    fn new(value: &'a Scalar) -> Self {
        match value {
            Scalar::Null => Needle::Bits(Tag::Null, 0),
            Scalar::Bool(flag) => Needle::Bits(Tag::Bool, u64::from(*flag)),
            Scalar::Int(n) => Needle::Bits(Tag::Int, *n as u64),
            Scalar::Float(f) => Needle::Float(*f),
            Scalar::Str(text) => Needle::Text(text.as_bytes()),
            Scalar::BigInt(digits) => Needle::BigInt(digits.as_bytes()),
        }
    }
}

/// The cell of `column` in a row. Rows usually share one key order, so the
/// position where the column was last found is tried first.
fn find_cell<'c>(cells: &'c [Cell], column: u32, hint: &mut usize) -> Option<&'c Cell> {
    if let Some(cell) = cells.get(*hint) {
        if cell.column == column {
            return Some(cell);
        }
    }
    let position = cells.iter().position(|cell| cell.column == column)?;
    *hint = position;
    Some(&cells[position])
}

/// Decode the raw JSON text of a [`CellValue::Nested`] cell.
pub fn decode_nested(raw: &str) -> CoreResult<JsonTree> {
    let mut scanner = Scanner::new(raw, 0);
    let tree = scanner.decode_value(0)?;
    scanner.finish()?;
    Ok(tree)
}

/// Parse ASCII digits as an i64 (None on overflow or a non-digit). Digits
/// accumulate negatively so that `i64::MIN` parses.
fn parse_i64(negative: bool, digits: &[u8]) -> Option<i64> {
    if digits.len() > 19 {
        return None;
    }
    let mut value: i64 = 0;
    for &digit in digits {
        if !digit.is_ascii_digit() {
            return None;
        }
        value = value
            .checked_mul(10)?
            .checked_sub(i64::from(digit - b'0'))?;
    }
    if negative {
        Some(value)
    } else {
        value.checked_neg()
    }
}

fn too_deep() -> CoreError {
    CoreError::RowsBadShape {
        what: "JSON nested deeper than 512 levels",
    }
}

// --- parsing ---------------------------------------------------------------

/// What [`Builder::build`] produces; the snapshot adds the member.
struct Built {
    arena: String,
    columns: Vec<Box<str>>,
    column_ids: HashMap<Box<str>, u32>,
    cells: Vec<Cell>,
    row_ends: Vec<u32>,
    kind: SnapshotKind,
    has_rows: bool,
    header_json: Option<String>,
}

/// Single pass over the member: rows become cells, everything else is
/// validated (syntax, duplicate keys at any depth, nesting depth).
struct Builder<'j> {
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
    fn build(member: &'j [u8]) -> CoreResult<Built> {
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

// --- JSON scanner ----------------------------------------------------------

/// A scalar token.
enum Token {
    Null,
    Bool(bool),
    Int(i64),
    /// The text of an integer outside i64. JSON's grammar makes it
    /// normalized already: no leading zeros, and `-0` fits in i64.
    BigInt(Range<usize>),
    Float(f64),
}

/// A strict RFC 8259 scanner over text that is already valid UTF-8. Errors
/// carry the byte offset where the input stops making sense.
struct Scanner<'j> {
    text: &'j str,
    bytes: &'j [u8],
    pos: usize,
}

impl<'j> Scanner<'j> {
    fn new(text: &'j str, pos: usize) -> Self {
        Scanner {
            text,
            bytes: text.as_bytes(),
            pos,
        }
    }

    fn error_at(&self, offset: usize) -> CoreError {
        CoreError::RowsInvalidJson {
            offset: offset as u64,
        }
    }

    /// Skip whitespace (the four JSON whitespace bytes only) and return
    /// the next byte without consuming it.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        while let Some(&byte) = self.bytes.get(self.pos) {
            if !matches!(byte, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(byte);
            }
            self.pos += 1;
        }
        None
    }

    /// Skip whitespace; the next byte must start a value (checked when the
    /// value is read). Error at end of input.
    fn peek_value(&mut self) -> CoreResult<u8> {
        self.peek().ok_or_else(|| self.error_at(self.pos))
    }

    /// Skip whitespace and return where the next value starts.
    fn value_start(&mut self) -> CoreResult<usize> {
        self.peek_value()?;
        Ok(self.pos)
    }

    /// Nothing but whitespace may follow the top-level value.
    fn finish(&mut self) -> CoreResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error_at(self.pos)),
        }
    }

    /// On `{` or `[`: consume it; false (and consume `close`) if empty.
    fn open_container(&mut self, close: u8) -> CoreResult<bool> {
        self.pos += 1;
        if self.peek_value()? == close {
            self.pos += 1;
            return Ok(false);
        }
        Ok(true)
    }

    /// After a member: true (consuming `,`) if another follows, false
    /// (consuming `close`) at the end.
    #[inline]
    fn next_member(&mut self, close: u8) -> CoreResult<bool> {
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(byte) if byte == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.error_at(self.pos)),
        }
    }

    /// An object key must come next; returns its offset.
    fn expect_key(&mut self) -> CoreResult<usize> {
        match self.peek() {
            Some(b'"') => Ok(self.pos),
            _ => Err(self.error_at(self.pos)),
        }
    }

    fn expect_colon(&mut self) -> CoreResult<()> {
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(self.error_at(self.pos)),
        }
    }

    /// On a `"`: consume the string `"name"` if that is exactly what comes
    /// next. `name` has no quote, backslash or control character, so the
    /// match is the whole string token.
    #[inline]
    fn take_plain_string(&mut self, name: &[u8]) -> bool {
        let start = self.pos + 1;
        let end = start + name.len();
        if self.bytes.get(end) == Some(&b'"') && same_bytes(&self.bytes[start..end], name) {
            self.pos = end + 1;
            return true;
        }
        false
    }

    /// On a `"`: an object key, decoded.
    fn key(&mut self) -> CoreResult<Cow<'j, str>> {
        let (span, escaped) = self.string()?;
        let raw = &self.text[span];
        Ok(if escaped {
            let mut decoded = String::with_capacity(raw.len());
            unescape_into(&mut decoded, raw);
            Cow::Owned(decoded)
        } else {
            Cow::Borrowed(raw)
        })
    }

    /// On a `"`: validate one string and return the span of its raw
    /// contents and whether it has escapes.
    fn string(&mut self) -> CoreResult<(Range<usize>, bool)> {
        let start = self.pos + 1;
        let mut at = start;
        let mut escaped = false;
        loop {
            at = find_special(self.bytes, at);
            match self.bytes.get(at) {
                Some(b'"') => {
                    self.pos = at + 1;
                    return Ok((start..at, escaped));
                }
                Some(b'\\') => {
                    escaped = true;
                    at = self.escape(at)?;
                }
                // A raw control character, or the end of input.
                _ => return Err(self.error_at(at)),
            }
        }
    }

    /// Validate the escape at `at` (a backslash); return the offset after
    /// it. A `\u` surrogate must be a high/low pair: a lone surrogate has
    /// no UTF-8 form (Python would keep it; we reject it).
    fn escape(&self, at: usize) -> CoreResult<usize> {
        match self.bytes.get(at + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 2),
            Some(b'u') => {
                let unit = hex4(self.bytes, at + 2).ok_or_else(|| self.error_at(at))?;
                match unit {
                    0xD800..=0xDBFF => {
                        let low = match self.bytes.get(at + 6..at + 8) {
                            Some(b"\\u") => hex4(self.bytes, at + 8),
                            _ => None,
                        };
                        match low {
                            Some(0xDC00..=0xDFFF) => Ok(at + 12),
                            _ => Err(self.error_at(at)),
                        }
                    }
                    0xDC00..=0xDFFF => Err(self.error_at(at)),
                    _ => Ok(at + 6),
                }
            }
            _ => Err(self.error_at(at)),
        }
    }

    /// A literal or a number (anything else is an error here).
    fn scalar(&mut self) -> CoreResult<Token> {
        let start = self.pos;
        let literal = |word: &[u8], token: Token, scanner: &mut Self| {
            if scanner.bytes.get(start..start + word.len()) == Some(word) {
                scanner.pos = start + word.len();
                Ok(token)
            } else {
                Err(scanner.error_at(start))
            }
        };
        match self.bytes.get(start) {
            Some(b'n') => literal(b"null", Token::Null, self),
            Some(b't') => literal(b"true", Token::Bool(true), self),
            Some(b'f') => literal(b"false", Token::Bool(false), self),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error_at(start)),
        }
    }

    /// A number. A float iff it has a fraction or an exponent (Python's
    /// `json` split); a float that overflows is infinity, as
    /// `float("1e400")` is.
    fn number(&mut self) -> CoreResult<Token> {
        let start = self.pos;
        let number = NumberParts::scan(self.bytes, start).map_err(|at| self.error_at(at))?;
        self.pos = number.end;
        if number.float {
            if let Some(value) = number.exact_float() {
                return Ok(Token::Float(value));
            }
            return match self.text[start..number.end].parse::<f64>() {
                Ok(value) => Ok(Token::Float(value)),
                Err(_) => Err(self.error_at(start)),
            };
        }
        if number.int_digits > MAX_INT_DIGITS {
            return Err(self.error_at(start + usize::from(number.negative) + MAX_INT_DIGITS));
        }
        Ok(match number.exact_int() {
            Some(value) => Token::Int(value),
            None => Token::BigInt(start..number.end),
        })
    }

    /// One value as a tree (for nested cells handed to a caller).
    fn decode_value(&mut self, depth: usize) -> CoreResult<JsonTree> {
        Ok(match self.peek_value()? {
            b'"' => {
                let (span, escaped) = self.string()?;
                let raw = &self.text[span];
                JsonTree::Str(if escaped {
                    let mut decoded = String::with_capacity(raw.len());
                    unescape_into(&mut decoded, raw);
                    decoded
                } else {
                    raw.to_owned()
                })
            }
            b'[' => {
                if depth >= MAX_DEPTH {
                    return Err(too_deep());
                }
                let mut items = Vec::new();
                if self.open_container(b']')? {
                    loop {
                        items.push(self.decode_value(depth + 1)?);
                        if !self.next_member(b']')? {
                            break;
                        }
                    }
                }
                JsonTree::Array(items)
            }
            b'{' => {
                if depth >= MAX_DEPTH {
                    return Err(too_deep());
                }
                let mut members = Vec::new();
                if self.open_container(b'}')? {
                    loop {
                        self.expect_key()?;
                        let name = self.key()?.into_owned();
                        self.expect_colon()?;
                        members.push((name, self.decode_value(depth + 1)?));
                        if !self.next_member(b'}')? {
                            break;
                        }
                    }
                }
                JsonTree::Object(members)
            }
            _ => match self.scalar()? {
                Token::Null => JsonTree::Null,
                Token::Bool(flag) => JsonTree::Bool(flag),
                Token::Int(value) => JsonTree::Int(value),
                Token::BigInt(span) => JsonTree::BigInt(self.text[span].to_owned()),
                Token::Float(value) => JsonTree::Float(value),
            },
        })
    }
}

/// `a == b` for slices of equal length, without a `memcmp` call for the
/// short names that row keys are.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let word = |s: &[u8], at: usize| {
        u64::from_le_bytes(<[u8; 8]>::try_from(&s[at..at + 8]).unwrap_or_default())
    };
    let len = a.len();
    if len != b.len() {
        return false;
    }
    if len < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let mut at = 0;
    while at + 8 <= len {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    // The last, possibly overlapping, word covers the tail.
    word(a, len - 8) == word(b, len - 8)
}

/// A number token taken apart in the one pass that validates it:
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
struct NumberParts {
    /// Offset after the token.
    end: usize,
    negative: bool,
    float: bool,
    /// Digits before the point (Python limits integers to 4300).
    int_digits: usize,
    /// The first 19 significant digits (they always fit in a u64).
    mantissa: u64,
    significant: u32,
    /// More significant digits followed: `mantissa` is not the value.
    truncated: bool,
    /// The value is `mantissa * 10^scale` (fraction digits, exponent).
    scale: i32,
}

/// Powers of ten that are exact in an f64.
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

impl NumberParts {
    /// Scan the number at `start`; the error is the offset where it breaks.
    fn scan(bytes: &[u8], start: usize) -> Result<NumberParts, usize> {
        let negative = bytes.get(start) == Some(&b'-');
        let int_start = start + usize::from(negative);
        let mut number = NumberParts {
            end: int_start,
            negative,
            float: false,
            int_digits: 0,
            mantissa: 0,
            significant: 0,
            truncated: false,
            scale: 0,
        };
        let mut at = match bytes.get(int_start) {
            Some(b'0') => int_start + 1,
            Some(b'1'..=b'9') => number.digits(bytes, int_start, false),
            _ => return Err(int_start),
        };
        number.int_digits = at - int_start;
        if bytes.get(at) == Some(&b'.') {
            let fraction = at + 1;
            at = number.digits(bytes, fraction, true);
            if at == fraction {
                return Err(at);
            }
            number.float = true;
        }
        if let Some(b'e' | b'E') = bytes.get(at) {
            at += 1;
            let negative_exponent = bytes.get(at) == Some(&b'-');
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            let digits = at;
            let mut exponent: i32 = 0;
            while let Some(digit) = bytes
                .get(at)
                .and_then(|b| b.checked_sub(b'0'))
                .filter(|d| *d < 10)
            {
                exponent = exponent.saturating_mul(10).saturating_add(i32::from(digit));
                at += 1;
            }
            if at == digits {
                return Err(at);
            }
            let exponent = if negative_exponent {
                -exponent
            } else {
                exponent
            };
            number.scale = number.scale.saturating_add(exponent);
            number.float = true;
        }
        number.end = at;
        Ok(number)
    }

    /// Take a run of digits from `at`; returns the offset after it.
    #[inline]
    fn digits(&mut self, bytes: &[u8], mut at: usize, fraction: bool) -> usize {
        while let Some(digit) = bytes
            .get(at)
            .and_then(|b| b.checked_sub(b'0'))
            .filter(|d| *d < 10)
        {
            if self.significant < 19 {
                // Leading zeros are not significant.
                if self.mantissa != 0 || digit != 0 {
                    self.significant += 1;
                }
                self.mantissa = self.mantissa * 10 + u64::from(digit);
                if fraction {
                    self.scale -= 1;
                }
            } else {
                self.truncated = true;
            }
            at += 1;
        }
        at
    }

    /// The integer, when it fits in an i64 (JSON integers have no leading
    /// zeros, so 19 digits or fewer).
    fn exact_int(&self) -> Option<i64> {
        if self.truncated {
            return None;
        }
        if self.negative {
            // -2^63 is the one magnitude without a positive i64.
            (self.mantissa <= 1 << 63).then(|| (self.mantissa as i64).wrapping_neg())
        } else {
            i64::try_from(self.mantissa).ok()
        }
    }

    /// Clinger's fast path: when the significant digits fit in 53 bits and
    /// the power of ten is exact (|scale| <= 22), one IEEE multiplication
    /// or division of two exact values is correctly rounded, so this equals
    /// `str::parse::<f64>`, which handles every other case.
    fn exact_float(&self) -> Option<f64> {
        if self.truncated || self.mantissa > 1 << 53 {
            return None;
        }
        let power = *EXACT_POWERS_OF_TEN.get(self.scale.unsigned_abs() as usize)?;
        let mantissa = self.mantissa as f64;
        let magnitude = if self.scale >= 0 {
            mantissa * power
        } else {
            mantissa / power
        };
        Some(if self.negative { -magnitude } else { magnitude })
    }
}

fn hex4(bytes: &[u8], at: usize) -> Option<u16> {
    let digits = bytes.get(at..at + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(text, 16).ok()
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Offset of the first `"`, `\` or control character at or after `at`
/// (or `bytes.len()`). Eight bytes at a time: for each class, the lowest
/// flagged byte of the word is exact (false flags only appear above a true
/// one), so the lowest flag of the union is the answer.
#[inline]
fn find_special(bytes: &[u8], mut at: usize) -> usize {
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).unwrap_or_default());
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let flags = ((quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (word.wrapping_sub(ONES * 0x20) & !word))
            & HIGH_BITS;
        if flags != 0 {
            return at + (flags.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&byte) = bytes.get(at) {
        if byte == b'"' || byte == b'\\' || byte < 0x20 {
            return at;
        }
        at += 1;
    }
    at
}

/// Append the decoded contents of a string literal `raw` (between the
/// quotes) that [`Scanner::string`] validated.
fn unescape_into(out: &mut String, raw: &str) {
    let bytes = raw.as_bytes();
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'\\', &bytes[at..]) {
        let slash = at + found;
        out.push_str(&raw[copied..slash]);
        let (ch, next) = match bytes[slash + 1] {
            b'b' => ('\u{8}', slash + 2),
            b'f' => ('\u{c}', slash + 2),
            b'n' => ('\n', slash + 2),
            b'r' => ('\r', slash + 2),
            b't' => ('\t', slash + 2),
            b'u' => {
                let unit = u32::from(hex4(bytes, slash + 2).unwrap_or(0xFFFD));
                if (0xD800..=0xDBFF).contains(&unit) {
                    let low = u32::from(hex4(bytes, slash + 8).unwrap_or(0xDC00));
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    (char::from_u32(code).unwrap_or('\u{FFFD}'), slash + 12)
                } else {
                    (char::from_u32(unit).unwrap_or('\u{FFFD}'), slash + 6)
                }
            }
            // `"`, `\` and `/` stand for themselves.
            other => (char::from(other), slash + 2),
        };
        out.push(ch);
        copied = next;
        at = next;
    }
    out.push_str(&raw[copied..]);
}

/// Append `value` as a JSON string literal.
fn push_json_string(out: &mut String, value: &str) {
    out.push('"');
    for ch in value.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> RowSnapshot {
        RowSnapshot::parse(text.as_bytes().to_vec()).expect("valid snapshot")
    }

    fn parse_err(data: &[u8]) -> CoreError {
        RowSnapshot::parse(data.to_vec()).expect_err("should fail")
    }

    fn matching(snapshot: &RowSnapshot, column: &str, value: Scalar) -> Vec<usize> {
        let page = snapshot
            .lookup(&[(column, value)], None, 0, usize::MAX)
            .unwrap();
        assert_eq!(page.total, page.rows.len());
        page.rows.iter().map(|row| row.index).collect()
    }

    fn s(text: &str) -> Scalar {
        Scalar::Str(text.into())
    }

    #[test]
    fn cell_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Cell>(), 16);
    }

    #[test]
    fn array_kind_and_columns() {
        let snap = parse(r#"[{"id": 1, "name": "a"}, {"name": "b", "extra": null}]"#);
        assert_eq!(snap.kind(), SnapshotKind::Array);
        assert_eq!(snap.row_count(), 2);
        assert!(snap.has_rows());
        assert_eq!(snap.header_json(), None);
        assert_eq!(snap.columns().collect::<Vec<_>>(), ["id", "name", "extra"]);
        assert!(snap.has_column("extra"));
        assert!(!snap.has_column("missing"));
    }

    #[test]
    fn document_header_and_rows() {
        let snap = parse(
            r#"{"format": "viano-database-snapshot", "rows": [{"id": 42}], "columns": [{"name": "id"}], "coverage": "partial"}"#,
        );
        assert_eq!(snap.kind(), SnapshotKind::Document);
        assert!(snap.has_rows());
        assert_eq!(snap.row_count(), 1);
        assert_eq!(
            snap.header_json(),
            Some(
                r#"{"format":"viano-database-snapshot","columns":[{"name": "id"}],"coverage":"partial"}"#
            )
        );
        assert_eq!(matching(&snap, "id", Scalar::Int(42)), [0]);
    }

    #[test]
    fn document_without_rows() {
        let snap = parse(r#"{"format": "x", "we\"ird": 1}"#);
        assert!(!snap.has_rows());
        assert_eq!(snap.row_count(), 0);
        assert_eq!(snap.header_json(), Some(r#"{"format":"x","we\"ird":1}"#));
    }

    #[test]
    fn escaped_rows_key_is_rows() {
        let snap = parse(r#"{"\u0072ows": [{"a": 1}]}"#);
        assert!(snap.has_rows());
        assert_eq!(snap.header_json(), Some("{}"));
    }

    #[test]
    fn shapes_rejected() {
        for text in [
            "42",
            "\"x\"",
            "null",
            r#"{"rows": {}}"#,
            r#"{"rows": null}"#,
        ] {
            assert!(
                matches!(parse_err(text.as_bytes()), CoreError::RowsBadShape { .. }),
                "{text}"
            );
        }
        assert_eq!(
            parse_err(br#"[{"a": 1}, 2]"#),
            CoreError::RowsNotObject { index: 1 }
        );
        assert_eq!(
            parse_err(br#"{"rows": [[]]}"#),
            CoreError::RowsNotObject { index: 0 }
        );
    }

    #[test]
    fn invalid_json_offsets() {
        assert_eq!(
            parse_err(b"[{\"a\": 1}"),
            CoreError::RowsInvalidJson { offset: 9 }
        );
        assert_eq!(parse_err(b"[] x"), CoreError::RowsInvalidJson { offset: 3 });
        assert!(matches!(parse_err(b""), CoreError::RowsInvalidJson { .. }));
        assert!(matches!(
            parse_err(br#"[{"a": NaN}]"#),
            CoreError::RowsInvalidJson { .. }
        ));
        assert!(matches!(
            parse_err(br#"[{"a": Infinity}]"#),
            CoreError::RowsInvalidJson { .. }
        ));
        assert!(matches!(
            parse_err(br#"[{"a": -Infinity}]"#),
            CoreError::RowsInvalidJson { .. }
        ));
        assert!(matches!(
            parse_err(br#"[{"a": 01}]"#),
            CoreError::RowsInvalidJson { .. }
        ));
        assert!(matches!(
            parse_err(br#"[{"a": "\ud800"}]"#),
            CoreError::RowsInvalidJson { .. }
        ));
        assert_eq!(
            parse_err(b"[{\"a\": \"\xff\"}]"),
            CoreError::RowsInvalidJson { offset: 8 }
        );
        assert_eq!(
            parse_err(b"\xEF\xBB\xBF[{\"a\": \"\xff\"}]"),
            CoreError::RowsInvalidJson { offset: 11 }
        );
        assert_eq!(
            parse_err(b"\xEF\xBB\xBF[] x"),
            CoreError::RowsInvalidJson { offset: 6 }
        );
        // Invalid JSON anywhere wins over a shape error before it.
        assert_eq!(
            parse_err(b"[1, {\"a\": x}]"),
            CoreError::RowsInvalidJson { offset: 10 }
        );
        assert!(matches!(
            parse_err(b"{\"rows\": 1, \"x\": ]"),
            CoreError::RowsInvalidJson { .. }
        ));
        assert!(matches!(
            parse_err(b"7 x"),
            CoreError::RowsInvalidJson { .. }
        ));
        assert_eq!(
            parse_err(b"[{}, 1, 2]"),
            CoreError::RowsNotObject { index: 1 }
        );
    }

    #[test]
    fn duplicates_at_any_depth() {
        assert_eq!(
            parse_err(br#"[{"a": 1, "a": 2}]"#),
            CoreError::RowsDuplicateKey { offset: 10 }
        );
        assert_eq!(
            parse_err(br#"[{"a": {"b": 1, "b": 2}}]"#),
            CoreError::RowsDuplicateKey { offset: 16 }
        );
        assert!(matches!(
            parse_err(br#"[{"a": [{"b": [{"c": 1, "c": 1}]}]}]"#),
            CoreError::RowsDuplicateKey { .. }
        ));
        assert!(matches!(
            parse_err(br#"{"rows": [], "rows": []}"#),
            CoreError::RowsDuplicateKey { .. }
        ));
        assert!(matches!(
            parse_err(br#"{"x": 1, "\u0078": 2}"#),
            CoreError::RowsDuplicateKey { .. }
        ));
        assert!(matches!(
            parse_err(br#"{"h": {"k": 1, "k": 1}, "rows": []}"#),
            CoreError::RowsDuplicateKey { .. }
        ));
        // The same key in sibling objects or in different rows is fine.
        parse(r#"[{"a": {"b": 1}, "c": {"b": 2}}, {"a": 3}]"#);
    }

    #[test]
    fn duplicates_in_large_nested_objects() {
        let members: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {i}")).collect();
        let ok = format!("[{{\"a\": {{{}}}}}]", members.join(","));
        parse(&ok);
        let bad = format!("[{{\"a\": {{{}, \"k50\": 0}}}}]", members.join(","));
        assert!(matches!(
            parse_err(bad.as_bytes()),
            CoreError::RowsDuplicateKey { .. }
        ));
    }

    #[test]
    fn depth_limit() {
        let ok = format!(
            "[{{\"a\": {}{}}}]",
            "[".repeat(MAX_DEPTH - 3),
            "]".repeat(MAX_DEPTH - 3)
        );
        parse(&ok);
        let deep = format!(
            "[{{\"a\": {}{}}}]",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        assert!(matches!(
            parse_err(deep.as_bytes()),
            CoreError::RowsBadShape { .. }
        ));
    }

    #[test]
    fn typed_equality() {
        let snap = parse(
            r#"[{"v": true}, {"v": 1}, {"v": "1"}, {"v": 1.0}, {"v": null}, {"v": [1]}, {}]"#,
        );
        assert_eq!(matching(&snap, "v", Scalar::Bool(true)), [0]);
        assert_eq!(matching(&snap, "v", Scalar::Int(1)), [1]);
        assert_eq!(matching(&snap, "v", s("1")), [2]);
        assert_eq!(matching(&snap, "v", Scalar::Float(1.0)), [3]);
        assert_eq!(matching(&snap, "v", Scalar::Null), [4]);
    }

    #[test]
    fn floats_compare_by_value() {
        let snap = parse(
            r#"[{"v": 1.0}, {"v": 1.00}, {"v": 1e0}, {"v": 10E-1}, {"v": -0.0}, {"v": 0.0}, {"v": 1e400}, {"v": -1e400}]"#,
        );
        assert_eq!(matching(&snap, "v", Scalar::Float(1.0)), [0, 1, 2, 3]);
        assert_eq!(matching(&snap, "v", Scalar::Float(0.0)), [4, 5]);
        assert_eq!(matching(&snap, "v", Scalar::Float(f64::INFINITY)), [6]);
        assert_eq!(matching(&snap, "v", Scalar::Float(f64::NEG_INFINITY)), [7]);
        assert_eq!(
            matching(&snap, "v", Scalar::Float(f64::NAN)),
            Vec::<usize>::new()
        );
    }

    #[test]
    fn integers_exact_at_any_size() {
        let big = "1180591620717411303424"; // 2**70
        let text = format!(
            r#"[{{"v": {big}}}, {{"v": -{big}}}, {{"v": -0}}, {{"v": 0}}, {{"v": 9223372036854775807}}, {{"v": -9223372036854775808}}, {{"v": 9223372036854775808}}]"#
        );
        let snap = parse(&text);
        assert_eq!(matching(&snap, "v", Scalar::integer(big).unwrap()), [0]);
        assert_eq!(
            matching(&snap, "v", Scalar::integer(&format!("-{big}")).unwrap()),
            [1]
        );
        assert_eq!(matching(&snap, "v", Scalar::Int(0)), [2, 3]);
        assert_eq!(matching(&snap, "v", Scalar::integer("-0").unwrap()), [2, 3]);
        assert_eq!(matching(&snap, "v", Scalar::Int(i64::MAX)), [4]);
        assert_eq!(matching(&snap, "v", Scalar::Int(i64::MIN)), [5]);
        assert_eq!(
            matching(&snap, "v", Scalar::integer("9223372036854775808").unwrap()),
            [6]
        );
        assert_eq!(
            matching(&snap, "v", Scalar::Float(0.0)),
            Vec::<usize>::new()
        );
        let page = snap
            .lookup(&[("v", Scalar::integer(big).unwrap())], None, 0, 10)
            .unwrap();
        assert_eq!(page.rows[0].fields, [("v", CellValue::BigInt(big))]);
    }

    #[test]
    fn scalar_integer_normalizes() {
        assert_eq!(Scalar::integer("-0").unwrap(), Scalar::Int(0));
        assert_eq!(Scalar::integer("000042").unwrap(), Scalar::Int(42));
        assert_eq!(
            Scalar::integer("-00099999999999999999999").unwrap(),
            Scalar::BigInt("-99999999999999999999".into())
        );
        assert!(Scalar::integer("").is_err());
        assert!(Scalar::integer("-").is_err());
        assert!(Scalar::integer("1.0").is_err());
        assert!(Scalar::integer("+1").is_err());
    }

    #[test]
    fn strings_compare_unescaped() {
        let snap = parse(
            r#"[{"s": "caf\u00e9"}, {"s": "café"}, {"s": "\ud83d\ude00"}, {"s": "a\"b\\c\n"}, {"s": "1; DROP TABLE x"}, {"s": ""}]"#,
        );
        assert_eq!(matching(&snap, "s", s("café")), [0, 1]);
        assert_eq!(matching(&snap, "s", s("😀")), [2]);
        assert_eq!(matching(&snap, "s", s("a\"b\\c\n")), [3]);
        assert_eq!(matching(&snap, "s", s("1; DROP TABLE x")), [4]);
        assert_eq!(matching(&snap, "s", s("")), [5]);
        let page = snap.lookup(&[("s", s("😀"))], None, 0, 1).unwrap();
        assert_eq!(page.rows[0].fields, [("s", CellValue::Str("😀"))]);
    }

    #[test]
    fn escaped_keys_are_decoded() {
        let snap = parse(r#"[{"n\u00e4me": 1, "a\"b": 2}]"#);
        assert_eq!(snap.columns().collect::<Vec<_>>(), ["näme", "a\"b"]);
        assert_eq!(matching(&snap, "näme", Scalar::Int(1)), [0]);
    }

    #[test]
    fn bom_is_skipped() {
        let snap = RowSnapshot::parse(b"\xEF\xBB\xBF[{\"a\": \"x\"}]").unwrap();
        assert_eq!(matching(&snap, "a", s("x")), [0]);
    }

    #[test]
    fn missing_key_differs_from_null() {
        let snap = parse(r#"[{"a": null}, {"b": 1}]"#);
        assert_eq!(matching(&snap, "a", Scalar::Null), [0]);
        let page = snap
            .lookup(&[("b", Scalar::Int(1))], Some(&["a", "b"]), 0, 10)
            .unwrap();
        assert_eq!(page.rows[0].fields, [("b", CellValue::Int(1))]);
    }

    #[test]
    fn nested_never_equals_scalar_and_decodes() {
        let snap = parse(
            r#"[{"n": [1, "x", {"k": null}], "m": {"z": 1.5, "big": 1180591620717411303424}}]"#,
        );
        for value in [Scalar::Null, Scalar::Int(1), s("[1, \"x\", {\"k\": null}]")] {
            assert_eq!(matching(&snap, "n", value), Vec::<usize>::new());
        }
        let page = snap.lookup(&[("n", Scalar::Null)], None, 0, 1).unwrap();
        assert_eq!(page.total, 0);
        let fields = snap.fields(0, None);
        let CellValue::Nested(raw) = fields[0].1 else {
            panic!("nested")
        };
        assert_eq!(
            decode_nested(raw).unwrap(),
            JsonTree::Array(vec![
                JsonTree::Int(1),
                JsonTree::Str("x".into()),
                JsonTree::Object(vec![("k".into(), JsonTree::Null)]),
            ])
        );
        let CellValue::Nested(raw) = fields[1].1 else {
            panic!("nested")
        };
        assert_eq!(
            decode_nested(raw).unwrap(),
            JsonTree::Object(vec![
                ("z".into(), JsonTree::Float(1.5)),
                (
                    "big".into(),
                    JsonTree::BigInt("1180591620717411303424".into())
                ),
            ])
        );
    }

    #[test]
    fn lookup_and_projection_paging() {
        let snap = parse(
            r#"[{"k": 1, "a": "x", "b": 2}, {"b": 3, "k": 1}, {"k": 2}, {"k": 1, "a": "y"}]"#,
        );
        let page = snap
            .lookup(
                &[("k", Scalar::Int(1))],
                Some(&["b", "a", "b", "nope"]),
                0,
                10,
            )
            .unwrap();
        assert_eq!(page.total, 3);
        let rows: Vec<_> = page
            .rows
            .iter()
            .map(|r| (r.index, r.fields.clone()))
            .collect();
        assert_eq!(
            rows,
            [
                (
                    0,
                    vec![("b", CellValue::Int(2)), ("a", CellValue::Str("x"))]
                ),
                (1, vec![("b", CellValue::Int(3))]),
                (3, vec![("a", CellValue::Str("y"))]),
            ]
        );
        let page = snap.lookup(&[("k", Scalar::Int(1))], None, 1, 1).unwrap();
        assert_eq!(page.total, 3);
        assert_eq!(page.rows.len(), 1);
        assert_eq!(page.rows[0].index, 1);
        assert_eq!(
            page.rows[0].fields,
            [("b", CellValue::Int(3)), ("k", CellValue::Int(1))]
        );
        let page = snap.lookup(&[("k", Scalar::Int(1))], None, 5, 10).unwrap();
        assert_eq!((page.total, page.rows.len()), (3, 0));
        let page = snap.lookup(&[("k", Scalar::Int(1))], None, 0, 0).unwrap();
        assert_eq!((page.total, page.rows.len()), (3, 0));
        let page = snap
            .lookup(&[("k", Scalar::Int(1)), ("a", s("y"))], None, 0, 10)
            .unwrap();
        assert_eq!(page.rows.iter().map(|r| r.index).collect::<Vec<_>>(), [3]);
        let page = snap
            .lookup(&[("k", Scalar::Int(1)), ("zzz", Scalar::Null)], None, 0, 10)
            .unwrap();
        assert_eq!(page.total, 0);
        let page = snap
            .lookup(&[("k", Scalar::Int(1))], Some(&[]), 0, 1)
            .unwrap();
        assert!(page.rows[0].fields.is_empty());
        assert!(matches!(
            snap.lookup(&[], None, 0, 1),
            Err(CoreError::InvalidArgument { .. })
        ));
    }

    #[test]
    fn find_references_reports_columns() {
        let snap = parse(r#"[{"a": 7, "b": 7, "c": 7}, {"a": 1, "c": 7}, {"b": "7"}, {"c": 7.0}]"#);
        let page = snap
            .find_references(
                &Scalar::Int(7),
                &["c", "a", "zzz", "c"],
                Some(&["a"]),
                0,
                10,
            )
            .unwrap();
        assert_eq!(page.total, 2);
        assert_eq!(page.rows[0].index, 0);
        assert_eq!(page.rows[0].matched, ["c", "a"]);
        assert_eq!(page.rows[0].fields, [("a", CellValue::Int(7))]);
        assert_eq!(page.rows[1].index, 1);
        assert_eq!(page.rows[1].matched, ["c"]);
        let page = snap
            .find_references(&Scalar::Int(7), &["zzz"], None, 0, 10)
            .unwrap();
        assert_eq!(page.total, 0);
        assert!(matches!(
            snap.find_references(&Scalar::Int(7), &[], None, 0, 1),
            Err(CoreError::InvalidArgument { .. })
        ));
    }

    #[test]
    fn shape_prediction_handles_varying_key_orders() {
        let snap =
            parse(r#"[{"a": 1, "b": 2}, {"b": 3, "a": 4}, {"a": 5}, {"c": 6, "a": 7, "b": 8}]"#);
        assert_eq!(snap.columns().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(matching(&snap, "a", Scalar::Int(4)), [1]);
        assert_eq!(matching(&snap, "b", Scalar::Int(8)), [3]);
        assert_eq!(matching(&snap, "a", Scalar::Int(7)), [3]);
    }

    /// The fast path's value for `token`, if it takes it.
    fn fast_float(token: &str) -> Option<f64> {
        let number = NumberParts::scan(token.as_bytes(), 0).expect("valid number");
        assert_eq!(number.end, token.len());
        number.exact_float()
    }

    fn scanned(token: &str) -> Token {
        Scanner::new(token, 0).number().expect("valid number")
    }

    #[test]
    fn numbers_scan_like_std_and_python() {
        for (token, expected) in [
            ("0", 0i64),
            ("-0", 0),
            ("7", 7),
            ("-7", -7),
            ("9223372036854775807", i64::MAX),
            ("-9223372036854775808", i64::MIN),
        ] {
            assert!(
                matches!(scanned(token), Token::Int(v) if v == expected),
                "{token}"
            );
        }
        for token in [
            "9223372036854775808",
            "-9223372036854775809",
            "10000000000000000000",
            "123456789012345678901234",
        ] {
            assert!(
                matches!(scanned(token), Token::BigInt(span) if span == (0..token.len())),
                "{token}"
            );
        }
        for token in [
            "1e400",
            "-1e400",
            "1e99999999999999",
            "0.0",
            "-0.0",
            "1e-99999999999",
            "1.7976931348623157e308",
        ] {
            let Token::Float(value) = scanned(token) else {
                panic!("{token}")
            };
            assert_eq!(
                value.to_bits(),
                token.parse::<f64>().unwrap().to_bits(),
                "{token}"
            );
        }
        for bad in ["-", "01", "1.", ".5", "1e", "1e+", "+1", "--1", "-a"] {
            let mut scanner = Scanner::new(bad, 0);
            let complete = scanner.number().is_ok() && scanner.pos == bad.len();
            assert!(!complete, "{bad}");
        }
    }

    #[test]
    fn exact_float_agrees_with_std() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut fast = 0;
        for _ in 0..200_000 {
            let int = next() % 10u64.pow((next() % 17) as u32 + 1);
            let digits = (next() % 12) as usize;
            let fraction = format!(
                "{:0width$}",
                next() % 10u64.pow(digits as u32),
                width = digits
            );
            let sign = if next() % 2 == 0 { "-" } else { "" };
            let exponent = match next() % 4 {
                0 => String::new(),
                1 => format!("e{}", (next() % 30) as i64 - 15),
                2 => format!("E+{}", next() % 25),
                _ => format!("e-{}", next() % 400),
            };
            let dot = if digits > 0 || exponent.is_empty() {
                format!(".{fraction}0")
            } else {
                String::new()
            };
            let token = format!("{sign}{int}{dot}{exponent}");
            let expected: f64 = token.parse().unwrap();
            if let Some(value) = fast_float(&token) {
                fast += 1;
                assert_eq!(value.to_bits(), expected.to_bits(), "{token}");
            }
        }
        assert!(fast > 50_000, "fast path taken {fast} times");
        for token in [
            "0.0",
            "-0.0",
            "1e0",
            "10E-1",
            "123456789012345.6",
            "9007199254740993.0",
            "1e22",
            "1e23",
            "0.1e-21",
        ] {
            let expected: f64 = token.parse().unwrap();
            assert_eq!(
                fast_float(token).unwrap_or(expected).to_bits(),
                expected.to_bits(),
                "{token}"
            );
        }
    }

    #[test]
    fn same_bytes_compares_exactly() {
        let a = b"abcdefghijklmnopqrstuvwxyz";
        for len in 0..a.len() {
            assert!(same_bytes(&a[..len], &a[..len]));
            for flip in 0..len {
                let mut b = a[..len].to_vec();
                b[flip] ^= 1;
                assert!(!same_bytes(&a[..len], &b), "{len} {flip}");
            }
        }
        assert!(!same_bytes(b"ab", b"abc"));
    }

    #[test]
    fn json_string_encoding() {
        let mut out = String::new();
        push_json_string(&mut out, "a\"b\\c\n\u{1}é");
        assert_eq!(out, r#""a\"b\\c\n\u0001é""#);
    }
}
