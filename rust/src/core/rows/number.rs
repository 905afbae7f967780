//! JSON numbers taken apart: integers exact in `i64` (bigger ones stay
//! text), floats through a fast exact path or `str::parse::<f64>`.

/// Parse ASCII digits as an i64 (None on overflow or a non-digit). Digits
/// accumulate negatively so that `i64::MIN` parses.
pub(super) fn parse_i64(negative: bool, digits: &[u8]) -> Option<i64> {
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

/// A number token taken apart in the one pass that validates it:
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
pub(super) struct NumberParts {
    /// Offset after the token.
    pub(super) end: usize,
    pub(super) negative: bool,
    pub(super) float: bool,
    /// Digits before the point (Python limits integers to 4300).
    pub(super) int_digits: usize,
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
    pub(super) fn scan(bytes: &[u8], start: usize) -> Result<NumberParts, usize> {
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
    pub(super) fn exact_int(&self) -> Option<i64> {
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
    pub(super) fn exact_float(&self) -> Option<f64> {
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
