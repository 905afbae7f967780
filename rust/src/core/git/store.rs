//! `GitStore`: an opened repository with its content cache, shareable
//! between threads; each public method is one whole core call.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use gix_hash::ObjectId;
use gix_object::Find;
use sha2::{Digest, Sha256};

use super::cache::{BlobCache, Content};
use super::disk_cache::{DiskCache, DiskStats, Found, Fresh, RawDigest};
use super::history::{self, PrefixMatch, Relation};
use super::location::objects_dir;
use super::log::{first_parent_log, LogCache, LogOutcome, LogQuery};
use super::objects::{
    check_deadline, commit_header, parse_oid, read_blob_into, unreadable, Objects,
};
use super::tree::{list_entries, recheck_absent, CommitTree, Selection, SkipReason};
use crate::core::error::{CoreError, CoreResult};
use crate::core::line_search::{self, CompiledQueries, Page, Query, SearchMode};
use crate::core::parallel::{parallel_map, try_map_with};
use crate::core::text::SourceText;

/// One page of a search over a selection.
#[derive(Debug)]
pub struct SearchOutcome {
    pub total: usize,
    pub files_searched: usize,
    /// The selection's skipped entries plus the files that turned out not to
    /// be text, in path order.
    pub skipped: Vec<(usize, SkipReason)>,
    /// `(entry index, 0-based line index, text)` of the page's hits.
    pub hits: Vec<(usize, u32, Arc<SourceText>)>,
}

pub struct GitStore {
    objects: Arc<gix_odb::Store>,
    cache: Mutex<BlobCache>,
    disk: Option<DiskCache>,
    blobs_read: AtomicU64,
    /// First-parent log entries by commit (`log`).
    log_cache: LogCache,
}

/// Where the persistent content cache is and how large it may grow.
#[derive(Debug, Clone, Copy)]
pub struct DiskCacheConfig<'a> {
    pub dir: &'a std::path::Path,
    pub max_bytes: u64,
}

impl GitStore {
    /// Opens the repository's object database with an in-memory content
    /// cache of `cache_bytes` and, if `disk` names one, the persistent
    /// content cache (see `disk_cache`).
    pub fn open(
        path: &std::path::Path,
        cache_bytes: u64,
        disk: Option<DiskCacheConfig<'_>>,
    ) -> CoreResult<Self> {
        let objects = gix_odb::Store::at_opts(
            objects_dir(path)?,
            gix_hash::Kind::Sha1,
            // No replacements: an ID must always name the bytes that hash to it.
            &mut std::iter::empty(),
            gix_odb::store::init::Options::default(),
        )
        .map_err(|_| CoreError::GitRepositoryUnavailable {
            what: "cannot open the repository",
        })?;
        let disk = disk
            .map(|config| DiskCache::open(config.dir, config.max_bytes))
            .transpose()?;
        Ok(GitStore {
            objects: Arc::new(objects),
            cache: Mutex::new(BlobCache::new(cache_bytes)),
            disk,
            blobs_read: AtomicU64::new(0),
            log_cache: LogCache::default(),
        })
    }

    /// A handle for one thread, with the delta-base cache git's default
    /// configuration gives (64 entries).
    pub(super) fn handle(&self) -> Objects {
        let mut handle = self.objects.to_cache_arc();
        handle.set_pack_cache(|| Box::<gix_pack::cache::lru::StaticLinkedList<64>>::default());
        handle
    }

    #[cfg(test)]
    pub(super) fn handle_for_profile(&self) -> Objects {
        self.handle()
    }

    /// How many blobs were inflated so far (a cached search inflates none).
    pub fn blobs_read(&self) -> u64 {
        self.blobs_read.load(Ordering::Relaxed)
    }

    /// The persistent cache's counters (`None` without one), once the
    /// segment being written is in place.
    pub fn disk_stats(&self) -> Option<DiskStats> {
        self.disk.as_ref().map(DiskCache::stats)
    }

    /// Waits until the persistent cache's background writer is done (a
    /// process calls this before it exits; dropping the store does too).
    pub fn flush_disk(&self) {
        if let Some(disk) = &self.disk {
            disk.flush();
        }
    }

    /// `(entries, estimated bytes)` of the content cache.
    pub fn cache_stats(&self) -> (usize, u64) {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        (cache.len(), cache.bytes())
    }

    /// The commits whose ID starts with `hex` (7 to 40 hex digits), at most
    /// `max_listed` of them named.
    pub fn resolve_revision(&self, hex: &str, max_listed: usize) -> CoreResult<PrefixMatch> {
        history::resolve_prefix(&self.handle(), hex, max_listed)
    }

    /// The first-parent line from `start` (a full 40-hex commit ID), each
    /// commit with its files changed; cached per commit (`log`).
    pub fn first_parent_log(
        &self,
        start: &str,
        query: &LogQuery,
        threads: usize,
        deadline: Option<Instant>,
    ) -> CoreResult<LogOutcome> {
        let start = parse_oid(start)?;
        commit_header(&self.handle(), &start)?;
        first_parent_log(
            &self.log_cache,
            || self.handle(),
            &start,
            query,
            threads,
            deadline,
        )
    }

    /// Commits the first-parent log cache holds.
    pub fn log_cache_len(&self) -> usize {
        self.log_cache.len()
    }

    /// How the commit `reported` relates to `pinned` (full 40-hex IDs),
    /// visiting at most `max_commits` commits.
    pub fn relate(
        &self,
        reported: &str,
        pinned: &str,
        max_commits: u64,
        deadline: Option<Instant>,
    ) -> CoreResult<Relation> {
        let (reported, pinned) = (parse_oid(reported)?, parse_oid(pinned)?);
        history::relate(&self.handle(), &reported, &pinned, max_commits, deadline)
    }

    /// `tree` with the absent blobs that arrived since (see
    /// [`CommitTree::with_arrived`]): a long-lived process sees a fetch.
    pub fn refresh_absent(&self, tree: &CommitTree) -> CoreResult<Option<CommitTree>> {
        tree.with_arrived(&self.handle())
    }

    /// Every non-directory entry of the commit's tree (a full 40-hex ID),
    /// sorted by path bytes, with blob sizes from object headers (no blob is
    /// inflated). `threads` 0 = every core.
    pub fn tree(
        &self,
        commit: &str,
        max_entries: usize,
        threads: usize,
        deadline: Option<Instant>,
    ) -> CoreResult<CommitTree> {
        let commit = parse_oid(commit)?;
        if let Some(disk) = &self.disk {
            // The repository must still hold the commit (one index lookup);
            // only the walk and the size lookups are saved.
            let repo = self.handle();
            commit_header(&repo, &commit)?;
            check_deadline(deadline)?;
            if let Some(mut entries) = disk.load_listing(&commit) {
                if entries.len() > max_entries {
                    return Err(CoreError::GitTooManyEntries {
                        limit: max_entries as u64,
                    });
                }
                // A blob absent then may have been fetched since.
                recheck_absent(&repo, &mut entries)?;
                return Ok(CommitTree { entries });
            }
        }
        let entries = list_entries(|| self.handle(), &commit, max_entries, threads, deadline)?;
        if let Some(disk) = &self.disk {
            disk.store_listing(&commit, &entries);
        }
        Ok(CommitTree { entries })
    }

    /// The decoded text (or skip reason) of each blob `(ID, listed size)`,
    /// from the caches or read on up to `threads` threads (and then kept in
    /// memory, not stored in the persistent cache). A blob listed over
    /// `max_bytes` is `TooLarge` and never read.
    pub fn contents(
        &self,
        blobs: &[(ObjectId, u64)],
        max_bytes: u64,
        threads: usize,
        deadline: Option<Instant>,
    ) -> CoreResult<Vec<Content>> {
        // One file read now and then would leave a file per read in the
        // persistent cache: only searches store there.
        let loaded = self.load(blobs, max_bytes, threads, deadline, false, |_| ())?;
        Ok(loaded.into_iter().map(|(content, ())| content).collect())
    }

    /// [`Self::contents`] plus `then(content)` for each blob, run by the
    /// worker that produced the content while its bytes are still in the
    /// CPU cache (a search scans a text right after inflating it, instead of
    /// reading all texts from memory again in a second pass). Blobs read
    /// from git go to the persistent cache if `store_on_disk`.
    pub(super) fn load<X: Clone + Send>(
        &self,
        blobs: &[(ObjectId, u64)],
        max_bytes: u64,
        threads: usize,
        deadline: Option<Instant>,
        store_on_disk: bool,
        then: impl Fn(&Content) -> X + Sync,
    ) -> CoreResult<Vec<(Content, X)>> {
        let mut out: Vec<Option<(Content, X)>> = Vec::with_capacity(blobs.len());
        let mut cached: Vec<(usize, Content)> = Vec::new();
        let mut missing: Vec<(usize, ObjectId)> = Vec::new();
        {
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            for (i, &(oid, size)) in blobs.iter().enumerate() {
                if size > max_bytes {
                    let content = Err(SkipReason::TooLarge);
                    let extra = then(&content);
                    out.push(Some((content, extra)));
                    continue;
                }
                match cache.get(&oid) {
                    Some(content) => cached.push((i, content)),
                    None => missing.push((i, oid)),
                }
                out.push(None);
            }
        }
        let extras = parallel_map(&cached, threads, |(_, content)| then(content));
        for ((i, content), extra) in cached.into_iter().zip(extras) {
            out[i] = Some((content, extra));
        }
        if !missing.is_empty() {
            // The same content under several paths is read once: sorted by
            // ID, the paths of one blob are neighbours; `group_end[k]` is
            // where the paths of `unique[k]` end in `missing`.
            missing.sort_unstable_by(|a, b| id_order(&a.1, &b.1).then(a.0.cmp(&b.0)));
            let mut unique: Vec<(ObjectId, u64)> = Vec::with_capacity(missing.len());
            let mut group_end: Vec<usize> = Vec::with_capacity(missing.len());
            for (at, &(i, oid)) in missing.iter().enumerate() {
                if unique.last().map(|&(last, _)| last) == Some(oid) {
                    group_end.pop();
                } else {
                    unique.push((oid, blobs[i].1));
                }
                group_end.push(at + 1);
            }
            let unique_ids: Vec<ObjectId> = unique.iter().map(|&(oid, _)| oid).collect();
            let found: Vec<Option<Found>> = match &self.disk {
                Some(disk) => disk.find(&unique_ids),
                None => vec![None; unique.len()],
            };
            let items: Vec<(ObjectId, u64, Option<Found>)> = unique
                .iter()
                .zip(found)
                .map(|(&(oid, size), found)| (oid, size, found))
                .collect();
            let storing = store_on_disk && self.disk.is_some();
            let loaded = self.map_blobs_largest_first(
                &items,
                // Blobs the persistent cache serves go last, in ID order,
                // which is their segment's file order: checking them is
                // quick, and streaming through the file measured faster.
                |(_, size, found)| if found.is_some() { 0 } else { *size },
                threads,
                deadline,
                |repo, _, (oid, size, found)| {
                    // A cache entry that fails its checks is read from git again.
                    let cached = found
                        .as_ref()
                        .zip(self.disk.as_ref())
                        .and_then(|(found, disk)| disk.load(found));
                    let (content, from_git, digest) = match cached {
                        Some(content) => (content, false, RawDigest::Unknown),
                        None => {
                            let (content, digest) =
                                read_text(repo, oid, *size, max_bytes, storing)?;
                            (content, true, digest)
                        }
                    };
                    let extra = then(&content);
                    // The handle the memory cache keeps is made here, while
                    // the text's counter is in this core's cache: made by
                    // the caller afterwards it cost a cache miss per blob.
                    let kept = content.clone();
                    Ok(((content, extra, from_git, digest), kept))
                },
            )?;
            let (loaded, kept): (Vec<_>, Vec<Content>) = loaded.into_iter().unzip();
            let from_git = loaded
                .iter()
                .filter(|(_, _, from_git, _)| *from_git)
                .count();
            self.blobs_read
                .fetch_add(from_git as u64, Ordering::Relaxed);
            if let Some(disk) = &self.disk {
                disk.count_hits((loaded.len() - from_git) as u64);
            }
            if let Some(disk) = self.disk.as_ref().filter(|_| storing) {
                // What to store: blobs read from git, and blobs loaded from a
                // segment that failed a check elsewhere (it is about to go).
                let fresh: Vec<Fresh> = items
                    .iter()
                    .zip(&loaded)
                    .filter_map(|((oid, _, found), (content, _, from_git, digest))| {
                        let digest = match found {
                            _ if is_transient(content) => return None,
                            _ if *from_git => *digest,
                            Some(found) if found.segment_rejected() => found.raw_digest(),
                            _ => return None,
                        };
                        Some((*oid, content.clone(), digest))
                    })
                    .collect();
                if !fresh.is_empty() {
                    disk.store(fresh);
                }
            }
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            cache.insert_many(
                unique_ids
                    .into_iter()
                    .zip(kept)
                    .filter(|(_, content)| !is_transient(content)),
            );
            drop(cache);
            // Each result moves to the last path of its blob; only the other
            // paths of a blob listed more than once get copies.
            let mut start = 0;
            for ((content, extra, _, _), &end) in loaded.into_iter().zip(&group_end) {
                for &(i, _) in &missing[start..end - 1] {
                    out[i] = Some((content.clone(), extra.clone()));
                }
                out[missing[end - 1].0] = Some((content, extra));
                start = end;
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// The decoded text of the regular file at `path`, or why it has none
    /// (`binary`, `not_utf8`, `too_large`, `missing`).
    pub fn text(
        &self,
        tree: &CommitTree,
        path: &[u8],
        max_bytes: u64,
        deadline: Option<Instant>,
    ) -> CoreResult<Content> {
        if tree
            .find(path)
            .is_some_and(|e| e.unusable == Some(SkipReason::Missing))
        {
            return Ok(Err(SkipReason::Missing));
        }
        let entry = tree.readable_file(path)?;
        let mut contents = self.contents(&[(entry.oid, entry.size)], max_bytes, 1, deadline)?;
        contents.pop().ok_or(CoreError::GitRequestInvalid {
            what: "no regular file at this path",
        })
    }

    /// Reads the selection's files, then runs one query (`mode` is
    /// `literal`, `literal_ignore_case` or `symbol`) over the texts and
    /// cuts one page. Texts are read on `threads` threads and searched on
    /// as many (0 = every core); the answer does not depend on the count.
    #[allow(clippy::too_many_arguments)]
    pub fn search(
        &self,
        tree: &CommitTree,
        selection: &Selection,
        mode: &str,
        pattern: &str,
        page: Page,
        threads: usize,
        deadline: Option<Instant>,
    ) -> CoreResult<SearchOutcome> {
        let query = SearchMode::parse(mode)
            .and_then(|mode| Query::new(mode, pattern))
            .map_err(CoreError::in_git_request)?;
        let compiled = CompiledQueries::new(std::slice::from_ref(&query))
            .map_err(CoreError::in_git_request)?;
        let blobs: Vec<(ObjectId, u64)> = selection
            .files
            .iter()
            .map(|&i| (tree.entries[i].oid, tree.entries[i].size))
            .collect();
        // Each text is searched by the worker that decoded it.
        let loaded = self.load(
            &blobs,
            selection.max_file_bytes,
            threads,
            deadline,
            true,
            |content| match content {
                Ok(text) => compiled.matching_lines(text),
                Err(_) => Vec::new(),
            },
        )?;
        let mut skipped = selection.skipped.clone();
        let mut searched: Vec<usize> = Vec::with_capacity(loaded.len());
        let mut texts: Vec<Arc<SourceText>> = Vec::with_capacity(loaded.len());
        let mut per_text: Vec<Vec<Vec<u32>>> = Vec::with_capacity(loaded.len());
        for (&index, (content, lines)) in selection.files.iter().zip(loaded) {
            match content {
                Ok(text) => {
                    searched.push(index);
                    texts.push(text);
                    per_text.push(lines);
                }
                Err(reason) => skipped.push((index, reason)),
            }
        }
        skipped.sort_unstable_by_key(|&(index, _)| index);
        let mut pages = line_search::cut_pages(per_text, &[page]);
        let result = pages.pop().unwrap_or_default();
        Ok(SearchOutcome {
            total: result.total,
            files_searched: texts.len(),
            skipped,
            hits: result
                .hits
                .into_iter()
                .map(|(t, line)| (searched[t], line, Arc::clone(&texts[t])))
                .collect(),
        })
    }

    /// The floor of a cold search: inflates every blob `selection` would
    /// read, on `threads` threads, into one reused buffer per worker, and
    /// discards the bytes (no decode, no cache, no search). Returns the
    /// bytes inflated. Benchmarks compare a cold search with this.
    pub fn inflate_floor(
        &self,
        tree: &CommitTree,
        selection: &Selection,
        threads: usize,
        deadline: Option<Instant>,
    ) -> CoreResult<u64> {
        let mut unique: Vec<(ObjectId, u64)> = selection
            .files
            .iter()
            .map(|&i| (tree.entries[i].oid, tree.entries[i].size))
            .collect();
        unique.sort_unstable();
        unique.dedup_by_key(|&mut (oid, _)| oid);
        // In the order a search reads them.
        let sizes = self.map_blobs_largest_first(
            &unique,
            |&(_, size)| size,
            threads,
            deadline,
            |repo, buf, (oid, _)| {
                let data = repo
                    .try_find(oid, buf)
                    .map_err(|_| unreadable("a blob is corrupt"))?
                    .ok_or(unreadable("a blob of the commit is missing"))?;
                Ok(data.data.len() as u64)
            },
        )?;
        Ok(sizes.into_iter().sum())
    }

    /// Lower-case hex SHA-256 of each blob's bytes (the provenance of a
    /// hit), for blob IDs in 40-hex form.
    pub fn sha256_hex<S: AsRef<str>>(
        &self,
        blob_ids: &[S],
        threads: usize,
        deadline: Option<Instant>,
    ) -> CoreResult<Vec<String>> {
        let oids = blob_ids
            .iter()
            .map(|id| parse_oid(id.as_ref()))
            .collect::<CoreResult<Vec<_>>>()?;
        // A digest stored with a text in the persistent cache (checked with
        // the entry) saves reading the blob from git.
        let found: Vec<Option<Found>> = match &self.disk {
            Some(disk) => disk.find(&oids),
            None => vec![None; oids.len()],
        };
        // Stored digests (what a served search's hits have) are checked and
        // taken here; only the others need workers with repository handles
        // (starting them cost more than the few checks of a page of hits).
        let mut digests: Vec<Option<[u8; 32]>> = found
            .iter()
            .map(|found| {
                found
                    .as_ref()
                    .zip(self.disk.as_ref())
                    .and_then(|(found, disk)| disk.sha256(found))
            })
            .collect();
        let unread: Vec<(usize, ObjectId)> = digests
            .iter()
            .zip(&oids)
            .enumerate()
            .filter(|(_, (digest, _))| digest.is_none())
            .map(|(i, (_, oid))| (i, *oid))
            .collect();
        check_deadline(deadline)?;
        let read = if unread.is_empty() {
            Vec::new()
        } else {
            self.map_blobs(&unread, threads, deadline, |repo, scratch, (_, oid)| {
                // Only a hit's blob gets here, whose text was just read.
                let bytes = read_blob_into(repo, oid, scratch)?
                    .ok_or(unreadable("a blob of the commit is missing"))?;
                Ok(<[u8; 32]>::from(Sha256::digest(bytes)))
            })?
        };
        for ((i, _), digest) in unread.into_iter().zip(read) {
            digests[i] = Some(digest);
        }
        Ok(digests
            .into_iter()
            .map(|digest| {
                digest
                    .unwrap_or_default()
                    .iter()
                    .fold(String::with_capacity(64), |mut out, b| {
                        let _ = write!(out, "{b:02x}");
                        out
                    })
            })
            .collect())
    }

    /// [`Self::map_blobs`], handing out the items in order of decreasing
    /// `size` (results still in input order): the pool claims one item at a
    /// time, so the largest blob claimed last would keep one core busy
    /// while the others have nothing left.
    fn map_blobs_largest_first<T: Sync, R: Send>(
        &self,
        items: &[T],
        size: impl Fn(&T) -> u64,
        threads: usize,
        deadline: Option<Instant>,
        work: impl Fn(&Objects, &mut Vec<u8>, &T) -> CoreResult<R> + Sync,
    ) -> CoreResult<Vec<R>> {
        let order = largest_first(items, size);
        let done = self.map_blobs(&order, threads, deadline, |repo, scratch, &i| {
            work(repo, scratch, &items[i]).map(|r| (i, r))
        })?;
        let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
        for (i, r) in done {
            slots[i] = Some(r);
        }
        Ok(slots.into_iter().flatten().collect())
    }

    /// Runs `work` for every item on the core's thread pool, each worker
    /// with its own repository handle (and so its own delta-base cache) and
    /// one scratch buffer that every blob it inflates reuses.
    /// The first error (or the deadline) stops every worker.
    pub(super) fn map_blobs<T: Sync, R: Send>(
        &self,
        items: &[T],
        threads: usize,
        deadline: Option<Instant>,
        work: impl Fn(&Objects, &mut Vec<u8>, &T) -> CoreResult<R> + Sync,
    ) -> CoreResult<Vec<R>> {
        try_map_with(
            items,
            threads,
            || (self.handle(), Vec::new()),
            |(repo, scratch), item| {
                check_deadline(deadline).and_then(|()| work(repo, scratch, item))
            },
        )
    }
}

/// A verdict that says nothing lasting about the blob's bytes, and so is kept
/// in no cache: `TooLarge` depends on the limit of the query, `Missing` on
/// whether the repository holds the blob yet.
fn is_transient(content: &Content) -> bool {
    matches!(content, Err(SkipReason::TooLarge | SkipReason::Missing))
}

/// The order of blob IDs, by their first 8 bytes first: the same order as
/// comparing all 20, without a `memcmp` call per comparison (sorting 10,000
/// IDs and finding each path's made about 300,000 of them, 2 ms of CPU
/// time in a served search); the whole ID is compared only on equal
/// prefixes.
fn id_order(a: &ObjectId, b: &ObjectId) -> std::cmp::Ordering {
    let prefix = |oid: &ObjectId| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&oid.as_bytes()[..8]);
        u64::from_be_bytes(word)
    };
    prefix(a).cmp(&prefix(b)).then_with(|| a.cmp(b))
}

/// Indices of `items` by decreasing `size` (ties in input order).
fn largest_first<T>(items: &[T], size: impl Fn(&T) -> u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(size(&items[i])));
    order
}

/// The decoded text of a blob, or why it has none. The blob is inflated
/// straight into a buffer of its listed size that becomes the text's own
/// (no copy, and the buffer comes zeroed from the allocator, so no byte is
/// written twice); only a text whose decoding changes bytes (a BOM or `\r`,
/// rare) is copied, and so is a delta's, whose resolution grows the buffer
/// past the text (two work buffers plus the instructions), so that a kept
/// text never holds more memory than the cache counts for it.
/// With `for_disk`, also what the persistent cache's writer needs for the
/// SHA-256 of the raw bytes: hashed here only when decoding changed them,
/// else left to the writer, which hashes the text.
fn read_text(
    repo: &Objects,
    oid: &ObjectId,
    listed_size: u64,
    max_bytes: u64,
    for_disk: bool,
) -> CoreResult<(Content, RawDigest)> {
    let mut own = vec![0u8; usize::try_from(listed_size).unwrap_or(0)];
    let Some(len) = read_blob_into(repo, oid, &mut own)?.map(<[u8]>::len) else {
        // Listed while present (a stored listing, say), gone since.
        return Ok((Err(SkipReason::Missing), RawDigest::Unknown));
    };
    if len as u64 > max_bytes {
        // The listed size was wrong; still never decode past the limit.
        return Ok((Err(SkipReason::TooLarge), RawDigest::Unknown));
    }
    let mut digest = if for_disk {
        RawDigest::TextIsRaw
    } else {
        RawDigest::Unknown
    };
    let hash_raw = |raw: &[u8]| {
        if for_disk {
            digest = RawDigest::Known(Sha256::digest(raw).into());
        }
    };
    let (decoded, nul_after_invalid) = if own.capacity() - len > len / 8 {
        let decoded = SourceText::decode_slice_noting_change(&own[..len], hash_raw);
        let nul = decoded.is_err() && memchr::memchr(0, &own[..len]).is_some();
        (decoded, Some(nul))
    } else {
        own.truncate(len);
        (SourceText::decode_noting_change(own, hash_raw), None)
    };
    match decoded {
        Ok(text) => Ok((Ok(Arc::new(text)), digest)),
        Err(CoreError::NulByte { .. }) => Ok((Err(SkipReason::Binary), RawDigest::Unknown)),
        Err(_) => {
            // Decoding names the first offending byte, and a PNG's first is
            // 0x89, not its NUL. But a blob with a NUL anywhere holds no
            // searchable text (git's own rule), while `not_utf8` makes every
            // search of the commit partial. The buffer was given away above,
            // so on this rare path it is read again.
            let nul = match nul_after_invalid {
                Some(nul) => nul,
                None => {
                    let mut again = Vec::new();
                    read_blob_into(repo, oid, &mut again)?
                        .is_some_and(|raw| memchr::memchr(0, raw).is_some())
                }
            };
            let reason = if nul {
                SkipReason::Binary
            } else {
                SkipReason::NotUtf8
            };
            Ok((Err(reason), RawDigest::Unknown))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_order_is_the_order_of_whole_ids() {
        // Equal prefixes differing late, differing early, equal IDs.
        let ids: Vec<ObjectId> = [
            [[1u8; 8], [9; 8], [0; 8]],
            [[1; 8], [2; 8], [0; 8]],
            [[0; 8], [255; 8], [0; 8]],
            [[1; 8], [2; 8], [0; 8]],
            [[200; 8], [0; 8], [1; 8]],
        ]
        .iter()
        .map(|parts| ObjectId::from_bytes_or_panic(&parts.concat()[..20]))
        .collect();
        for a in &ids {
            for b in &ids {
                assert_eq!(id_order(a, b), a.cmp(b), "{a} {b}");
            }
        }
    }
}
