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
//!
//! Files: this one holds the public types and the [`RowSnapshot`] queries;
//! `builder.rs` turns a member into cells in one pass, `scanner.rs` is the
//! strict JSON scanner (tokens, strings, escapes) and `number.rs` takes JSON
//! numbers apart.

mod builder;
mod number;
mod scanner;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::ops::Range;

use crate::core::error::{CoreError, CoreResult};

use self::builder::Builder;
use self::number::parse_i64;
use self::scanner::Scanner;

/// Deepest array/object nesting accepted, counted from the top-level value.
/// Python's own `json` gives up near its recursion limit (~1000); row data
/// from a database is never close to this.
pub const MAX_DEPTH: usize = 512;

fn too_deep() -> CoreError {
    CoreError::RowsBadShape {
        what: "JSON nested deeper than 512 levels",
    }
}

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
