//! A strict RFC 8259 scanner: tokens, strings and their escapes, and the
//! JSON string encoding used for the document header.

use std::borrow::Cow;
use std::ops::Range;

use crate::core::error::{CoreError, CoreResult};

use super::number::NumberParts;
use super::{too_deep, JsonTree, MAX_DEPTH};

/// Python refuses to convert integers with more digits than this
/// (`sys.get_int_max_str_digits()`), so `json.loads` rejects them too.
const MAX_INT_DIGITS: usize = 4300;

/// A scalar token.
pub(super) enum Token {
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
pub(super) struct Scanner<'j> {
    pub(super) text: &'j str,
    pub(super) bytes: &'j [u8],
    pub(super) pos: usize,
}

impl<'j> Scanner<'j> {
    pub(super) fn new(text: &'j str, pos: usize) -> Self {
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
    pub(super) fn peek_value(&mut self) -> CoreResult<u8> {
        self.peek().ok_or_else(|| self.error_at(self.pos))
    }

    /// Skip whitespace and return where the next value starts.
    pub(super) fn value_start(&mut self) -> CoreResult<usize> {
        self.peek_value()?;
        Ok(self.pos)
    }

    /// Nothing but whitespace may follow the top-level value.
    pub(super) fn finish(&mut self) -> CoreResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error_at(self.pos)),
        }
    }

    /// On `{` or `[`: consume it; false (and consume `close`) if empty.
    pub(super) fn open_container(&mut self, close: u8) -> CoreResult<bool> {
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
    pub(super) fn next_member(&mut self, close: u8) -> CoreResult<bool> {
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
    pub(super) fn expect_key(&mut self) -> CoreResult<usize> {
        match self.peek() {
            Some(b'"') => Ok(self.pos),
            _ => Err(self.error_at(self.pos)),
        }
    }

    pub(super) fn expect_colon(&mut self) -> CoreResult<()> {
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
    pub(super) fn take_plain_string(&mut self, name: &[u8]) -> bool {
        let start = self.pos + 1;
        let end = start + name.len();
        if self.bytes.get(end) == Some(&b'"') && same_bytes(&self.bytes[start..end], name) {
            self.pos = end + 1;
            return true;
        }
        false
    }

    /// On a `"`: an object key, decoded.
    pub(super) fn key(&mut self) -> CoreResult<Cow<'j, str>> {
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
    pub(super) fn string(&mut self) -> CoreResult<(Range<usize>, bool)> {
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
    pub(super) fn scalar(&mut self) -> CoreResult<Token> {
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
    pub(super) fn number(&mut self) -> CoreResult<Token> {
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
    pub(super) fn decode_value(&mut self, depth: usize) -> CoreResult<JsonTree> {
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
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
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
pub(super) fn unescape_into(out: &mut String, raw: &str) {
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
pub(super) fn push_json_string(out: &mut String, value: &str) {
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
