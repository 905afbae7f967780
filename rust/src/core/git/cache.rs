//! The content cache of the git reader: decoded blobs by blob ID.
//!
//! A blob ID is the hash of the blob's bytes, so an entry is never stale:
//! the cache needs no invalidation, only a memory bound. Entries are decoded
//! texts or the final reason a blob has none (`binary`, `not_utf8`). When
//! the estimated size passes the bound, the least recently used entries go.

use std::sync::Arc;

use gix_hash::ObjectId;

use super::tree::SkipReason;
use crate::core::text::SourceText;

/// A decoded text, or why the blob has none.
pub type Content = Result<Arc<SourceText>, SkipReason>;

/// What an entry costs besides its text bytes: the map slot, the text
/// header and the line index (4 bytes per 4 KiB block).
pub const ENTRY_OVERHEAD: u64 = 256;

struct Slot {
    content: Content,
    cost: u64,
    last_used: u64,
}

pub struct BlobCache {
    max_bytes: u64,
    bytes: u64,
    clock: u64,
    /// Keyed by the ID's leading bytes (`gix_hashtable`): IDs are hashes
    /// already, and hashing 10,000 of them again with SipHash showed in
    /// the sequential part of every cold search.
    slots: gix_hashtable::HashMap<ObjectId, Slot>,
}

impl BlobCache {
    pub fn new(max_bytes: u64) -> Self {
        BlobCache {
            max_bytes,
            bytes: 0,
            clock: 0,
            slots: gix_hashtable::HashMap::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The current estimate of the memory the entries hold.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The cached content of `oid`; a hit becomes the most recently used.
    pub fn get(&mut self, oid: &ObjectId) -> Option<Content> {
        self.clock += 1;
        let slot = self.slots.get_mut(oid)?;
        slot.last_used = self.clock;
        Some(slot.content.clone())
    }

    /// Adds (or refreshes) entries, then evicts down to the bound. An entry
    /// larger than the whole bound is not kept.
    pub fn insert_many(&mut self, items: impl IntoIterator<Item = (ObjectId, Content)>) {
        let items = items.into_iter();
        let (least, most) = items.size_hint();
        self.slots.reserve(most.unwrap_or(least));
        for (oid, content) in items {
            let cost = ENTRY_OVERHEAD
                + match &content {
                    Ok(text) => text.as_bytes().len() as u64,
                    Err(_) => 0,
                };
            if cost > self.max_bytes {
                continue;
            }
            self.clock += 1;
            let slot = Slot {
                content,
                cost,
                last_used: self.clock,
            };
            if let Some(old) = self.slots.insert(oid, slot) {
                self.bytes -= old.cost;
            }
            self.bytes += cost;
        }
        self.evict();
    }

    fn evict(&mut self) {
        if self.bytes <= self.max_bytes {
            return;
        }
        let mut by_age: Vec<(u64, ObjectId)> = self
            .slots
            .iter()
            .map(|(oid, slot)| (slot.last_used, *oid))
            .collect();
        by_age.sort_unstable();
        for (_, oid) in by_age {
            if self.bytes <= self.max_bytes {
                break;
            }
            if let Some(slot) = self.slots.remove(&oid) {
                self.bytes -= slot.cost;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    fn text(len: usize) -> Content {
        Ok(Arc::new(SourceText::decode(vec![b'a'; len]).unwrap()))
    }

    #[test]
    fn least_recently_used_goes_first() {
        let mut cache = BlobCache::new(3 * (ENTRY_OVERHEAD + 100));
        cache.insert_many([
            (oid(1), text(100)),
            (oid(2), text(100)),
            (oid(3), text(100)),
        ]);
        assert!(cache.get(&oid(1)).is_some()); // 2 is now the oldest
        cache.insert_many([(oid(4), text(100))]);
        assert!(cache.get(&oid(2)).is_none());
        for n in [1, 3, 4] {
            assert!(cache.get(&oid(n)).is_some(), "{n}");
        }
        assert_eq!(cache.bytes(), 3 * (ENTRY_OVERHEAD + 100));
    }

    #[test]
    fn too_big_entries_and_zero_bound_keep_nothing() {
        let mut cache = BlobCache::new(ENTRY_OVERHEAD + 10);
        cache.insert_many([(oid(1), text(11))]);
        assert!(cache.is_empty());
        let mut none = BlobCache::new(0);
        none.insert_many([(oid(1), Err(SkipReason::Binary))]);
        assert!(none.is_empty());
    }

    #[test]
    fn reinsert_does_not_double_count() {
        let mut cache = BlobCache::new(1 << 20);
        cache.insert_many([(oid(1), text(10)), (oid(1), text(10))]);
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.bytes(), ENTRY_OVERHEAD + 10);
    }
}
