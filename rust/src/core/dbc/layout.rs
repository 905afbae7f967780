//! Column layouts from the engine's format strings (`DBCfmt.h`, `DB2fmt.h`).
//!
//! One letter per file column. The letters and their byte widths follow the
//! lineage's loaders (`DBCFileLoader::Load` and `DB2FileLoader::Load` compute
//! the column offsets): in a WDBC file `b` and `X` are one byte, `l` eight,
//! every other letter four; in a WDB2 file `b` is one byte and every other
//! letter four. `n` and `d` mark the ID column (`d`: read from the file but
//! not kept in the engine's struct).

use crate::core::error::{CoreError, CoreResult};

/// What one column holds, by its format letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// `x`: a 4-byte column the engine skips.
    Skip,
    /// `X`: a 1-byte column the engine skips.
    SkipByte,
    /// `s`: an offset into the string block.
    Str,
    /// `f`: a 32-bit float.
    Float,
    /// `i`: a 32-bit integer.
    Int,
    /// `b`: one byte.
    Byte,
    /// `l`: a 64-bit integer.
    Long,
    /// `d`: the ID, not kept in the engine's struct.
    SortId,
    /// `n`: the ID, kept in the struct.
    Id,
}

impl Column {
    fn from_letter(letter: u8) -> CoreResult<Self> {
        Ok(match letter {
            b'x' => Column::Skip,
            b'X' => Column::SkipByte,
            b's' => Column::Str,
            b'f' => Column::Float,
            b'i' => Column::Int,
            b'b' => Column::Byte,
            b'l' => Column::Long,
            b'd' => Column::SortId,
            b'n' => Column::Id,
            _ => {
                return Err(CoreError::InvalidArgument {
                    what: "unknown format letter (allowed: x X s f i b l d n)",
                })
            }
        })
    }
}

/// The two file containers of this lineage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    Wdbc,
    Wdb2,
}

impl Container {
    pub fn name(self) -> &'static str {
        match self {
            Container::Wdbc => "WDBC",
            Container::Wdb2 => "WDB2",
        }
    }

    fn width(self, column: Column) -> u32 {
        match (self, column) {
            (_, Column::Byte) => 1,
            (Container::Wdbc, Column::SkipByte) => 1,
            (Container::Wdbc, Column::Long) => 8,
            _ => 4,
        }
    }
}

/// A parsed format string placed in one container: each column's kind and
/// byte offset inside a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub columns: Vec<Column>,
    pub offsets: Vec<u32>,
    /// Bytes the columns occupy (a record may be longer, never shorter).
    pub width: u32,
    /// The last `n` or `d` column, as the engine's `GetFormatRecordSize` picks it.
    pub id_column: Option<usize>,
}

/// Longest format string accepted (the longest of the lineage has ~140 letters).
pub const MAX_FORMAT_LETTERS: usize = 4096;

impl Layout {
    pub fn parse(format: &str, container: Container) -> CoreResult<Self> {
        if format.is_empty() || format.len() > MAX_FORMAT_LETTERS {
            return Err(CoreError::InvalidArgument {
                what: "format string must have 1 to 4096 letters",
            });
        }
        let mut columns = Vec::with_capacity(format.len());
        let mut offsets = Vec::with_capacity(format.len());
        let mut width = 0u32;
        let mut id_column = None;
        for (index, letter) in format.bytes().enumerate() {
            let column = Column::from_letter(letter)?;
            if matches!(column, Column::Id | Column::SortId) {
                id_column = Some(index);
            }
            offsets.push(width);
            // At most 4096 columns of at most 8 bytes: no overflow.
            width += container.width(column);
            columns.push(column);
        }
        Ok(Layout {
            columns,
            offsets,
            width,
            id_column,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_the_container() {
        let dbc = Layout::parse("nbXlsfx", Container::Wdbc).unwrap();
        assert_eq!(dbc.offsets, vec![0, 4, 5, 6, 14, 18, 22]);
        assert_eq!(dbc.width, 26);
        let db2 = Layout::parse("nbXlsfx", Container::Wdb2).unwrap();
        assert_eq!(db2.offsets, vec![0, 4, 5, 9, 13, 17, 21]);
        assert_eq!(db2.id_column, Some(0));
    }

    #[test]
    fn the_last_index_letter_is_the_id() {
        let layout = Layout::parse("iniiiin", Container::Wdbc).unwrap();
        assert_eq!(layout.id_column, Some(6));
        assert_eq!(
            Layout::parse("xf", Container::Wdbc).unwrap().id_column,
            None
        );
    }

    #[test]
    fn unknown_letters_and_empty_formats_are_refused() {
        for bad in ["", "nq", "p"] {
            assert_eq!(
                Layout::parse(bad, Container::Wdbc).unwrap_err().code(),
                "invalid_argument"
            );
        }
    }
}
