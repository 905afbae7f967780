//! Text buffers handed back when their text is dropped and reused by the
//! next batch: the one piece of process-wide state of the core.
//!
//! Why: a batch of verified texts is tens of MiB in buffers of hundreds of
//! KiB. The C allocator serves such buffers from fresh pages and returns
//! them to the OS when they are freed (glibc trims the top of its heap, or
//! unmaps them), so the next batch takes one page fault per 4 KiB again:
//! ~8,200 faults, 12–14 ms for the 32 MiB of benchmark (a), about a fifth
//! of the whole batch (docs/benchmarks.md, "Where the time of (a) goes").
//! A buffer kept here keeps its pages: the next text of a similar size is
//! inflated into memory that is already mapped.
//!
//! Bounds: at most [`KEEP_BYTES`] of capacity and [`KEEP_BUFFERS`]
//! buffers are kept; only buffers of at least [`MIN_CAPACITY`] (smaller
//! ones come from the allocator's free lists without page faults). A
//! buffer is handed out for a length between its capacity / 2 and its
//! capacity, so a kept buffer never holds more than twice its text. Kept
//! buffers hold no data anyone can read: they are cleared when taken.
//!
//! A buffer handed back to a full list displaces the ones kept longest
//! without use, so the list follows the current work: kept as they came
//! and never displaced, the 6 MB texts of one batch (a table member) filled
//! it, and every later batch of 512 KiB texts found no buffer to reuse and
//! took its page faults again (benchmark (a) run after the router's
//! benchmarks in one process: 63.6 ms against 55–57 ms alone).

use std::collections::VecDeque;
use std::sync::Mutex;

/// The most capacity kept for reuse (two batches of benchmark (a)).
pub const KEEP_BYTES: usize = 64 << 20;
/// The most buffers kept.
pub const KEEP_BUFFERS: usize = 1024;
/// Smaller buffers are not kept.
pub const MIN_CAPACITY: usize = 64 << 10;
/// Fresh buffers are rounded up to a multiple of this, so that texts of
/// slightly different sizes can reuse each other's buffers.
const GRANULE: usize = 64 << 10;

struct Spare {
    /// Oldest first: a buffer is given back at the end.
    buffers: VecDeque<Vec<u8>>,
    bytes: usize,
}

impl Spare {
    const fn new() -> Self {
        Spare {
            buffers: VecDeque::new(),
            bytes: 0,
        }
    }

    /// The best-fitting kept buffer for `len`, cleared.
    fn take(&mut self, len: usize) -> Option<Vec<u8>> {
        if len < MIN_CAPACITY / 2 {
            return None;
        }
        let best = self
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= len && b.capacity() / 2 <= len)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i)?;
        let mut buffer = self.buffers.remove(best)?;
        self.bytes -= buffer.capacity();
        buffer.clear();
        Some(buffer)
    }

    fn give(&mut self, buffer: Vec<u8>) {
        let capacity = buffer.capacity();
        if !(MIN_CAPACITY..=KEEP_BYTES).contains(&capacity) {
            return;
        }
        while self.buffers.len() >= KEEP_BUFFERS || self.bytes + capacity > KEEP_BYTES {
            let Some(oldest) = self.buffers.pop_front() else {
                break;
            };
            self.bytes -= oldest.capacity();
        }
        self.bytes += capacity;
        self.buffers.push_back(buffer);
    }
}

static SPARE: Mutex<Spare> = Mutex::new(Spare::new());

fn spare() -> std::sync::MutexGuard<'static, Spare> {
    // A panic while holding the lock leaves a consistent list behind (every
    // operation is a push or a remove with its byte count).
    SPARE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An empty buffer with room for at least `len` bytes: a kept one when one
/// fits (best fit, at most twice `len`), else a fresh one. `None` when the
/// allocation fails.
pub fn take(len: usize) -> Option<Vec<u8>> {
    if let Some(buffer) = spare().take(len) {
        return Some(buffer);
    }
    let rounded = if len >= MIN_CAPACITY {
        len.div_ceil(GRANULE).saturating_mul(GRANULE)
    } else {
        len
    };
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(rounded).ok()?;
    Some(buffer)
}

/// Keeps `buffer` for a later [`take`] when it is large enough and the
/// bounds allow, else frees it.
pub fn give(buffer: Vec<u8>) {
    if buffer.capacity() >= MIN_CAPACITY {
        spare().give(buffer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_buffer_is_taken_again_cleared_and_bounds_hold() {
        let mut spare = Spare::new();
        let mut first = take(300 << 10).unwrap();
        assert!(first.capacity() >= 300 << 10);
        first.extend_from_slice(&[7; 1000]);
        let address = first.as_ptr() as usize;
        spare.give(first);
        let again = spare.take(290 << 10).unwrap();
        assert!(again.is_empty(), "a kept buffer is handed out cleared");
        assert_eq!(
            again.as_ptr() as usize,
            address,
            "the kept buffer is reused"
        );
        assert_eq!(spare.bytes, 0);
        // Twice the length or more is not handed out; too small neither.
        spare.give(again);
        assert!(spare.take(100 << 10).is_none());
        assert!(spare.take(400 << 10).is_none());
        // Small buffers are not kept; the kept total never passes the bound.
        spare.give(Vec::with_capacity(1024));
        assert_eq!(spare.buffers.len(), 1);
        for _ in 0..(KEEP_BYTES >> 20) + 8 {
            spare.give(Vec::with_capacity(1 << 20));
        }
        assert!(spare.bytes <= KEEP_BYTES);
        assert_eq!(
            spare.bytes,
            spare.buffers.iter().map(Vec::capacity).sum::<usize>()
        );
    }

    #[test]
    fn buffers_of_the_current_work_displace_the_oldest() {
        let mut spare = Spare::new();
        // One batch of large texts fills the list ...
        for _ in 0..KEEP_BYTES / (6 << 20) {
            spare.give(Vec::with_capacity(6 << 20));
        }
        let large = spare.buffers.len();
        assert!(spare.bytes + (6 << 20) > KEEP_BYTES);
        // ... and the next batch's smaller buffers are still kept, each
        // displacing the oldest large one only as far as it needs room.
        let small: Vec<Vec<u8>> = (0..32).map(|_| Vec::with_capacity(512 << 10)).collect();
        let addresses: Vec<usize> = small.iter().map(|b| b.as_ptr() as usize).collect();
        for buffer in small {
            spare.give(buffer);
        }
        assert!(spare.bytes <= KEEP_BYTES);
        assert!(spare.buffers.len() > 32 && spare.buffers.len() < large + 32);
        let again = spare.take(500 << 10).unwrap();
        assert!(addresses.contains(&(again.as_ptr() as usize)));
        assert_eq!(
            spare.bytes,
            spare.buffers.iter().map(Vec::capacity).sum::<usize>()
        );
        // A buffer larger than the whole bound is never kept.
        spare.give(Vec::with_capacity(KEEP_BYTES + GRANULE));
        assert!(spare.bytes <= KEEP_BYTES);
    }

    #[test]
    fn fresh_buffers_are_rounded_to_the_granule() {
        let buffer = take(MIN_CAPACITY + 1).unwrap();
        assert!(buffer.capacity() > MIN_CAPACITY);
        let small = take(100).unwrap();
        assert!(small.capacity() >= 100);
    }
}
