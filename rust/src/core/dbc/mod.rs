//! Reader of the client data files the lineage's server loads at start:
//! WDBC (`.dbc`) and WDB2 (`.db2`, the 4.3.4 client's `Item-sparse.db2`).
//!
//! The whole file is read once (its size is known before anything is
//! allocated, and bounded by the caller), then every count and offset of
//! the header is checked against that size with checked arithmetic before a
//! record is touched: a truncated file, a lying header, huge counts or a
//! string offset past the string block are typed errors
//! (`client_file_invalid`, `client_file_truncated`, `client_string_invalid`),
//! never a panic and never an allocation the file's own size does not bound.
//!
//! Header layouts follow the lineage's loaders (`DBCFileLoader::Load`,
//! `DB2FileLoader::Load`): WDBC has five u32 (magic, records, fields, record
//! size, string block size); WDB2 adds table hash, build and a timestamp, and
//! for builds after 12880 also min ID, max ID, locale and the copy table
//! size; when max ID is not 0 an index of `(max - min + 1)` u32 row indices
//! and u16 string lengths follows the header, which the loader skips.

pub mod layout;

use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::core::error::{CoreError, CoreResult};
use crate::core::fs::open_regular_file;
pub use layout::{Column, Container, Layout};

const WDBC: u32 = 0x4342_4457;
const WDB2: u32 = 0x3242_4457;
/// The first WDB2 build whose header carries min/max ID, locale and copy table size.
const WDB2_EXTENDED_AFTER_BUILD: u32 = 12880;

/// The WDB2-only header fields (zero for WDBC).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Db2Header {
    pub table_hash: u32,
    pub build: u32,
    pub timestamp: u32,
    pub min_id: u32,
    pub max_id: u32,
    pub locale: u32,
    pub copy_table_size: u32,
}

/// One decoded column value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `n`, `d`, `i`, `x`, `b`, `X`: unsigned as stored (the caller knows
    /// from the engine's struct whether the member is signed).
    UInt(u32),
    Long(u64),
    Float(f32),
    Str(String),
}

/// An opened client data file with its layout.
pub struct ClientTable {
    data: Vec<u8>,
    container: Container,
    layout: Layout,
    record_count: u32,
    record_size: u32,
    records_start: usize,
    strings_start: usize,
    string_size: u32,
    db2: Db2Header,
    sha256: [u8; 32],
    ids: OnceLock<Vec<(u32, u32)>>,
}

fn invalid(what: &'static str) -> CoreError {
    CoreError::ClientFileInvalid { what }
}

fn truncated(what: &'static str) -> CoreError {
    CoreError::ClientFileTruncated { what }
}

fn u32_at(data: &[u8], offset: usize) -> Option<u32> {
    let bytes = data.get(offset..offset.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

impl ClientTable {
    /// Reads the file at `path` (refused above `max_bytes`) with the engine format `format`.
    pub fn open(path: &Path, format: &str, max_bytes: u64) -> CoreResult<Self> {
        let file = open_regular_file(path)?;
        let size = file.metadata()?.len();
        if size > max_bytes {
            return Err(CoreError::ByteLimitExceeded { limit: max_bytes });
        }
        let mut data = Vec::with_capacity(size as usize);
        // take(): the file may grow between stat and read.
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut data)?;
        if data.len() as u64 > max_bytes {
            return Err(CoreError::ByteLimitExceeded { limit: max_bytes });
        }
        Self::parse(data, format)
    }

    /// Checks the header of `data` against its size and `format`.
    pub fn parse(data: Vec<u8>, format: &str) -> CoreResult<Self> {
        let magic = u32_at(&data, 0).ok_or_else(|| truncated("header"))?;
        let container = match magic {
            WDBC => Container::Wdbc,
            WDB2 => Container::Wdb2,
            _ => return Err(invalid("not a WDBC or WDB2 file")),
        };
        let layout = Layout::parse(format, container)?;
        let field = |index: usize| u32_at(&data, index * 4).ok_or_else(|| truncated("header"));
        let record_count = field(1)?;
        let field_count = field(2)?;
        let record_size = field(3)?;
        let string_size = field(4)?;
        let mut db2 = Db2Header::default();
        let mut header_len = 20usize;
        if container == Container::Wdb2 {
            db2.table_hash = field(5)?;
            db2.build = field(6)?;
            db2.timestamp = field(7)?;
            header_len = 32;
            if db2.build > WDB2_EXTENDED_AFTER_BUILD {
                db2.min_id = field(8)?;
                db2.max_id = field(9)?;
                db2.locale = field(10)?;
                db2.copy_table_size = field(11)?;
                header_len = 48;
            }
        }
        if field_count as usize != layout.columns.len() {
            return Err(invalid("field count differs from the format"));
        }
        if record_size < layout.width {
            return Err(invalid("record size smaller than the format's columns"));
        }
        let mut records_start = header_len as u64;
        if container == Container::Wdb2 && db2.max_id != 0 {
            if db2.max_id < db2.min_id {
                return Err(invalid("max ID below min ID"));
            }
            // (max - min + 1) row indices (u32) and string lengths (u16).
            records_start += (u64::from(db2.max_id - db2.min_id) + 1) * 6;
        }
        // u32 * u32 fits in u64; the sums cannot overflow u64 either.
        let records_len = u64::from(record_count) * u64::from(record_size);
        let strings_start = records_start + records_len;
        let end = strings_start + u64::from(string_size);
        if end > data.len() as u64 {
            return Err(truncated("records or string block"));
        }
        let sha256: [u8; 32] = Sha256::digest(&data).into();
        Ok(ClientTable {
            container,
            layout,
            record_count,
            record_size,
            // Both fit in usize: they are at most data.len().
            records_start: records_start as usize,
            strings_start: strings_start as usize,
            string_size,
            db2,
            sha256,
            data,
            ids: OnceLock::new(),
        })
    }

    pub fn container(&self) -> Container {
        self.container
    }
    pub fn record_count(&self) -> u32 {
        self.record_count
    }
    pub fn record_size(&self) -> u32 {
        self.record_size
    }
    pub fn string_size(&self) -> u32 {
        self.string_size
    }
    pub fn field_count(&self) -> usize {
        self.layout.columns.len()
    }
    pub fn db2_header(&self) -> Db2Header {
        self.db2
    }
    pub fn sha256(&self) -> [u8; 32] {
        self.sha256
    }
    pub fn id_column(&self) -> Option<usize> {
        self.layout.id_column
    }

    fn check_record(&self, record: u32) -> CoreResult<()> {
        if record >= self.record_count {
            return Err(CoreError::InvalidArgument {
                what: "record index out of range",
            });
        }
        Ok(())
    }

    fn check_column(&self, column: usize) -> CoreResult<Column> {
        self.layout
            .columns
            .get(column)
            .copied()
            .ok_or(CoreError::InvalidArgument {
                what: "column index out of range",
            })
    }

    /// The raw bytes of one column of one record (both already checked).
    fn cell(&self, record: u32, column: usize) -> &[u8] {
        let start = self.records_start
            + record as usize * self.record_size as usize
            + self.layout.offsets[column] as usize;
        let kind = self.layout.columns[column];
        let width = match (self.container, kind) {
            (_, Column::Byte) | (Container::Wdbc, Column::SkipByte) => 1,
            (Container::Wdbc, Column::Long) => 8,
            _ => 4,
        };
        // In bounds: offsets + width <= layout.width <= record_size, and
        // every record lies before strings_start <= data.len().
        &self.data[start..start + width]
    }

    fn cell_u32(&self, record: u32, column: usize) -> u32 {
        let cell = self.cell(record, column);
        match cell.len() {
            1 => u32::from(cell[0]),
            _ => u32::from_le_bytes([cell[0], cell[1], cell[2], cell[3]]),
        }
    }

    /// The string at `offset` of the string block, up to its NUL.
    fn string(&self, offset: u32) -> CoreResult<&[u8]> {
        if offset >= self.string_size {
            return Err(CoreError::ClientStringInvalid {
                what: "offset past the string block",
            });
        }
        let block = &self.data[self.strings_start..self.strings_start + self.string_size as usize];
        let tail = &block[offset as usize..];
        let len = memchr::memchr(0, tail).ok_or(CoreError::ClientStringInvalid {
            what: "string not terminated inside the string block",
        })?;
        Ok(&tail[..len])
    }

    /// One column of one record.
    pub fn value(&self, record: u32, column: usize) -> CoreResult<Value> {
        self.check_record(record)?;
        let kind = self.check_column(column)?;
        Ok(match kind {
            Column::Float => Value::Float(f32::from_bits(self.cell_u32(record, column))),
            Column::Str => {
                let bytes = self.string(self.cell_u32(record, column))?;
                Value::Str(String::from_utf8_lossy(bytes).into_owned())
            }
            Column::Long if self.container == Container::Wdbc => {
                let cell = self.cell(record, column);
                let mut bytes = [0u8; 8];
                bytes.copy_from_slice(cell);
                Value::Long(u64::from_le_bytes(bytes))
            }
            _ => Value::UInt(self.cell_u32(record, column)),
        })
    }

    /// Every column of one record.
    pub fn record(&self, record: u32) -> CoreResult<Vec<Value>> {
        (0..self.field_count())
            .map(|column| self.value(record, column))
            .collect()
    }

    /// `(ID, record index)` sorted by ID, built on first use (a sort of one
    /// pair per record: faster to build than a hash map and half its size).
    /// A repeated ID keeps its last record, as the engine's index table does.
    fn id_index(&self) -> Option<&[(u32, u32)]> {
        let column = self.layout.id_column?;
        Some(self.ids.get_or_init(|| {
            let mut index: Vec<(u32, u32)> = (0..self.record_count)
                .map(|record| (self.cell_u32(record, column), record))
                .collect();
            // Unstable is fine: equal IDs are ordered by their record index too.
            index.sort_unstable();
            // Keep the last record of each ID.
            let mut kept: Vec<(u32, u32)> = Vec::with_capacity(index.len());
            for pair in index {
                match kept.last_mut() {
                    Some(last) if last.0 == pair.0 => *last = pair,
                    _ => kept.push(pair),
                }
            }
            kept
        }))
    }

    /// The record index of each ID (`None`: no such ID). Refused for a format without an ID column.
    pub fn find_ids(&self, ids: &[u32]) -> CoreResult<Vec<Option<u32>>> {
        let index = self.id_index().ok_or(CoreError::InvalidArgument {
            what: "the format has no ID column",
        })?;
        Ok(ids
            .iter()
            .map(|id| {
                index
                    .binary_search_by_key(id, |&(key, _)| key)
                    .ok()
                    .map(|at| index[at].1)
            })
            .collect())
    }

    /// Records whose integer `column` holds one of `values`, in file order, at most `limit`.
    pub fn find_uint(&self, column: usize, values: &[u32], limit: usize) -> CoreResult<Vec<u32>> {
        let kind = self.check_column(column)?;
        if matches!(kind, Column::Str | Column::Float | Column::Long) {
            return Err(CoreError::InvalidArgument {
                what: "not an integer column",
            });
        }
        let wanted: std::collections::HashSet<u32> = values.iter().copied().collect();
        Ok((0..self.record_count)
            .filter(|&record| wanted.contains(&self.cell_u32(record, column)))
            .take(limit)
            .collect())
    }

    /// Records whose string `column` equals `name` ignoring case, in file order, at most `limit`.
    pub fn find_string(&self, column: usize, name: &str, limit: usize) -> CoreResult<Vec<u32>> {
        if self.check_column(column)? != Column::Str {
            return Err(CoreError::InvalidArgument {
                what: "not a string column",
            });
        }
        let wanted = name.to_lowercase();
        let mut found = Vec::new();
        for record in 0..self.record_count {
            if found.len() >= limit {
                break;
            }
            let bytes = self.string(self.cell_u32(record, column))?;
            // Cheap length screen before decoding: lower-casing keeps most lengths.
            if bytes.len() > wanted.len() * 4 + 4 {
                continue;
            }
            if String::from_utf8_lossy(bytes).to_lowercase() == wanted {
                found.push(record);
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests;
