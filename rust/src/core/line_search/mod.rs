//! Line search over decoded texts: literal, case-insensitive literal and
//! token-boundary identifier search, many queries in one pass.
//!
//! # Semantics
//! A query matches a *line* (see [`crate::core::text`] for the line model);
//! results are line numbers, each line at most once per query, in text order.
//! - `Literal`: the pattern occurs in the line, byte for byte.
//! - `LiteralIgnoreCase`: the folded pattern occurs in the folded line, where
//!   folding maps every code point to its Unicode lowercase mapping
//!   ([`crate::core::text::fold_case`]).
//! - `Symbol`: the pattern is an identifier `[A-Za-z_][A-Za-z0-9_]*` and an
//!   occurrence counts only when the characters on both sides are not
//!   identifier characters (or are the line's edge). This is lexical: a hit
//!   may be a use, declaration, comment or string.
//! - `Word`: the same boundary rule for any run of `[A-Za-z0-9_]`, digits
//!   first allowed (`git grep -w`): a numeric ID, not the longer numbers
//!   that contain it. `WordIgnoreCase`: `Word` in the folded line, whose
//!   boundaries are judged there (the few non-ASCII letters that fold to
//!   ASCII ones, such as the Kelvin sign, count as word characters).
//!
//! Patterns never contain a line terminator, so a match never spans lines.
//!
//! # How one pass serves many queries, in time linear in the text
//! All case-sensitive patterns (literal and symbol) form one group, all
//! folded patterns a second one searched over the folded text.
//!
//! A group of several needles is searched in two stages. Each needle has a
//! *candidate key*: its window of at most [`KEY_LEN`] bytes that is rarest
//! by a byte-frequency table ([`candidate_key`]; a needle's first bytes,
//! such as `std`, `ret` or `#in` in C++, which the search used before, are
//! often the commonest, and a SIMD multi-pattern searcher fingerprints the
//! first bytes of each pattern). A batch over texts chooses among those
//! windows by a sample of its texts ([`key_sample`], `choose_keys`): the
//! window whose first four bytes, the searcher's fingerprint, occur least
//! often there (`f struct`, not `ypedef s`, whose `yped` starts every
//! `typedef`). The choice changes only how fast a search is, never its
//! answer. A leftmost-first multi-pattern searcher
//! (SIMD "Teddy" for small sets) over the keys finds the next position
//! where some key occurs, which marks the next line that may hold a hit. In
//! that line, the first [`PROBES`] key positions are checked by comparing,
//! for every needle, the needle placed so that its key sits there (a
//! compare stops at the line end); if the line is still undecided, its rest
//! (from the earliest place a needle whose key comes later can start) is
//! run once through an overlapping Aho-Corasick automaton over the whole
//! needles (no prefilter), which reports every occurrence of every needle,
//! overlapping ones included, so a symbol occurrence rejected at a token
//! boundary never hides a later accepted one. The line is left as soon as
//! every query of the group has it, and the search resumes at the next
//! line. Each byte is read a bounded number of times: the candidate search
//! verifies at most [`PREFIX_CAP`] bytes per position, finding the start of
//! a candidate line reads back over bytes the candidate search skipped, the
//! probes compare at most [`PROBES`] times per needle and line, the
//! automaton is one step per byte plus one step per reported occurrence (at
//! most one per needle and byte).
//!
//! (Restarting a leftmost-first search one byte after each match, and
//! prefix-comparing every needle there, as this module once did, costs run
//! length x pattern length on repeating text: 2.4 s for two 1 KiB needles
//! over one 1 MB line of `a`.)
//!
//! A line tail longer than [`LONG_LINE`] is searched needle by needle with
//! `memmem` under the rules of the next paragraph instead (the automaton
//! would report one occurrence per byte and needle on a long repeating run).
//!
//! A single needle is searched with one `memmem` finder (linear itself).
//! After a literal hit the line is decided and the search jumps to its end;
//! after a symbol occurrence rejected at a boundary it resumes at the
//! occurrence's end: an occurrence starting inside it would follow an
//! identifier byte, so none there can be accepted.

use aho_corasick::automaton::OverlappingState;
use aho_corasick::{packed, AhoCorasick, AhoCorasickKind, Input, MatchKind, Span};
use std::ops::Range;

use memchr::memmem;

use super::error::{CoreError, CoreResult};
use super::parallel::parallel_map;
use super::text::{count_newlines, fold_case, Haystack, SourceText};

mod keys;
mod rank;

use keys::choose_keys;
pub use keys::{candidate_key, key_sample, KEY_LEN, PREFIX_CAP};
#[cfg(test)]
use keys::{HEAD_LEN, SAMPLE_MAX, SAMPLE_PIECES};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Literal,
    LiteralIgnoreCase,
    Symbol,
    /// A run of `[A-Za-z0-9_]` (digits first allowed) standing as a whole
    /// word: the `Symbol` boundary rule, so a numeric ID finds itself and not
    /// longer numbers containing it.
    Word,
    /// `Word` over the folded text: the boundaries are judged there.
    WordIgnoreCase,
}

impl SearchMode {
    pub fn parse(name: &str) -> CoreResult<Self> {
        match name {
            "literal" => Ok(SearchMode::Literal),
            "literal_ignore_case" => Ok(SearchMode::LiteralIgnoreCase),
            "symbol" => Ok(SearchMode::Symbol),
            "word" => Ok(SearchMode::Word),
            "word_ignore_case" => Ok(SearchMode::WordIgnoreCase),
            _ => Err(CoreError::InvalidArgument {
                what: "unknown search mode",
            }),
        }
    }

    /// Searched in the folded text (one pattern group of its own).
    pub fn folded(self) -> bool {
        matches!(
            self,
            SearchMode::LiteralIgnoreCase | SearchMode::WordIgnoreCase
        )
    }

    /// An occurrence counts only at token boundaries.
    pub fn whole_word(self) -> bool {
        matches!(
            self,
            SearchMode::Symbol | SearchMode::Word | SearchMode::WordIgnoreCase
        )
    }
}

#[derive(Debug, Clone)]
pub struct Query {
    mode: SearchMode,
    /// Pattern bytes as searched: folded for `LiteralIgnoreCase`.
    needle: Vec<u8>,
}

impl Query {
    pub fn new(mode: SearchMode, pattern: &str) -> CoreResult<Self> {
        if pattern.is_empty() {
            return Err(CoreError::InvalidArgument {
                what: "empty search pattern",
            });
        }
        if pattern.bytes().any(|b| b == b'\n' || b == b'\r') {
            return Err(CoreError::InvalidArgument {
                what: "search pattern contains a line break",
            });
        }
        if pattern.contains('\0') {
            return Err(CoreError::InvalidArgument {
                what: "search pattern contains NUL",
            });
        }
        if mode == SearchMode::Symbol && !is_identifier(pattern) {
            return Err(CoreError::InvalidArgument {
                what: "symbol is not an identifier",
            });
        }
        if matches!(mode, SearchMode::Word | SearchMode::WordIgnoreCase) && !is_word(pattern) {
            return Err(CoreError::InvalidArgument {
                what: "a whole word is letters, digits and _ only",
            });
        }
        let needle = if mode.folded() {
            fold_case(pattern.as_bytes(), pattern.is_ascii())
        } else {
            pattern.as_bytes().to_vec()
        };
        Ok(Query { mode, needle })
    }

    pub fn mode(&self) -> SearchMode {
        self.mode
    }
}

/// `[A-Za-z0-9_]+`: a word whose occurrences the token-boundary rule can
/// judge (an occurrence starting inside a rejected one follows a word byte).
pub fn is_word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_identifier_byte)
}

/// `[A-Za-z_][A-Za-z0-9_]*`
pub fn is_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(is_identifier_byte)
}

#[inline]
fn is_identifier_byte(b: u8) -> bool {
    b == b'_' || b.is_ascii_alphanumeric()
}

/// Bytes the search reads, counted in tests only (zero cost in a build):
/// the tests bound it by a constant times text plus pattern bytes, which
/// a quadratic loop cannot meet, without timing anything.
#[cfg(test)]
mod work {
    use std::cell::Cell;

    thread_local! {
        static BYTES: Cell<u64> = const { Cell::new(0) };
    }

    pub fn add(bytes: usize) {
        BYTES.with(|b| b.set(b.get() + bytes as u64));
    }

    /// The count since the last call on this thread.
    pub fn take() -> u64 {
        BYTES.with(|b| b.replace(0))
    }
}

#[cfg(not(test))]
mod work {
    #[inline(always)]
    pub fn add(_bytes: usize) {}
}

thread_local! {
    /// One folding buffer per search thread, reused for every text.
    static FOLD_SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Queries prepared once and reused for every text of a batch.
pub struct CompiledQueries {
    count: usize,
    case_sensitive: Option<PatternGroup>,
    folded: Option<PatternGroup>,
}

struct PatternGroup {
    needles: Vec<Vec<u8>>,
    /// For each needle, the queries that use it (query index, is symbol).
    users: Vec<Vec<(usize, bool)>>,
    query_count: usize,
    /// One `memmem` finder per needle.
    finders: Vec<memmem::Finder<'static>>,
    /// Present when the group has several needles (module doc).
    shared: Option<Shared>,
}

/// The two stages of a search for several needles.
struct Shared {
    /// Finds the next line that may hold a hit.
    candidates: Candidates,
    /// For each needle, where its candidate key starts in it.
    key_offsets: Vec<usize>,
    /// The largest of `key_offsets`.
    max_key_offset: usize,
    /// Reports every occurrence of every needle in a line.
    exact: AhoCorasick,
}

enum Candidates {
    /// All needles have the same candidate key: one `memmem` (a
    /// one-pattern automaton gets no SIMD prefilter and is several times
    /// slower on real text).
    One(Box<memmem::Finder<'static>>),
    /// Leftmost-first over the distinct keys: aho-corasick's packed SIMD
    /// searcher (Teddy) itself, which reports its matches directly (an
    /// automaton with Teddy as its prefilter measured ~1.5x slower here).
    Packed(Box<packed::Searcher>),
    /// Leftmost-first over the distinct keys when there are too many for
    /// the packed searcher.
    Many(AhoCorasick),
}

impl Candidates {
    /// Start of the leftmost key occurrence in `bytes[from..to]`.
    fn find(&self, bytes: &[u8], from: usize, to: usize) -> Option<usize> {
        let found = match self {
            Candidates::One(finder) => finder.find(&bytes[from..to]).map(|at| from + at),
            Candidates::Packed(searcher) => searcher
                .find_in(bytes, Span::from(from..to))
                .map(|found| found.start()),
            Candidates::Many(automaton) => automaton
                .find(Input::new(bytes).span(from..to))
                .map(|found| found.start()),
        };
        // The bytes skipped plus the prefix verified at the hit.
        work::add(found.map_or(to - from, |at| at - from + PREFIX_CAP.min(to - at)));
        found
    }
}

/// Candidates of one line checked by comparing every needle there before
/// the rest of the line goes through the automaton: most lines of real text
/// hold one or two, and a compare is cheaper than starting the automaton.
/// Bounded, so a line costs at most this many compares per needle.
const PROBES: usize = 4;

/// A line tail longer than this is searched needle by needle with `memmem`
/// instead of through the overlapping automaton: both are linear, but on
/// long repeating runs the automaton reports an occurrence per byte and
/// needle, while `memmem` stops at a literal's first hit and skips a
/// rejected symbol occurrence whole.
const LONG_LINE: usize = 4096;

impl CompiledQueries {
    pub fn new(queries: &[Query]) -> CoreResult<Self> {
        Self::with_sample(queries, &[])
    }

    /// [`Self::new`] with candidate keys chosen by how often their first
    /// bytes occur in `sample` ([`key_sample`] of the texts to search);
    /// the answers do not depend on it.
    pub fn with_sample(queries: &[Query], sample: &[u8]) -> CoreResult<Self> {
        let sensitive = queries.iter().enumerate().filter(|(_, q)| !q.mode.folded());
        let folded = queries.iter().enumerate().filter(|(_, q)| q.mode.folded());
        Ok(CompiledQueries {
            count: queries.len(),
            case_sensitive: PatternGroup::build(sensitive, false, sample)?,
            // Over folded text too: with rare candidate keys one SIMD pass
            // beats one memmem pass per needle (lower-cased text is full of
            // bytes 0x61..0x7A, where the needles' first bytes, the old
            // candidates, lost all selectivity).
            folded: PatternGroup::build(folded, true, sample)?,
        })
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// For each query, the sorted 0-based indexes of the lines it matches.
    pub fn matching_lines(&self, text: &SourceText) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); self.count];
        if let Some(group) = &self.case_sensitive {
            group.scan(text.haystack(), &mut out);
        }
        if let Some(group) = &self.folded {
            FOLD_SCRATCH.with_borrow_mut(|scratch| {
                text.with_folded(scratch, |hay| group.scan(hay, &mut out));
            });
        }
        out
    }
}

impl PatternGroup {
    /// `folded`: the group is searched in folded text (its sample is
    /// folded too when keys are chosen).
    fn build<'q>(
        queries: impl Iterator<Item = (usize, &'q Query)>,
        folded: bool,
        sample: &[u8],
    ) -> CoreResult<Option<Self>> {
        let mut needles: Vec<Vec<u8>> = Vec::new();
        let mut users: Vec<Vec<(usize, bool)>> = Vec::new();
        let mut query_count = 0;
        for (index, query) in queries {
            query_count += 1;
            let is_symbol = query.mode.whole_word();
            match needles.iter().position(|n| *n == query.needle) {
                Some(slot) => users[slot].push((index, is_symbol)),
                None => {
                    needles.push(query.needle.clone());
                    users.push(vec![(index, is_symbol)]);
                }
            }
        }
        if needles.is_empty() {
            return Ok(None);
        }
        let finders = needles
            .iter()
            .map(|n| memmem::Finder::new(n).into_owned())
            .collect();
        let shared = if needles.len() > 1 {
            Some(Shared::build(&needles, folded, sample)?)
        } else {
            None
        };
        Ok(Some(PatternGroup {
            needles,
            users,
            query_count,
            finders,
            shared,
        }))
    }

    fn scan(&self, hay: Haystack<'_>, out: &mut [Vec<u32>]) {
        match &self.shared {
            Some(shared) => self.scan_shared(shared, hay, out),
            None => {
                for ((finder, needle), users) in
                    self.finders.iter().zip(&self.needles).zip(&self.users)
                {
                    scan_one(finder, needle, users, hay, out);
                }
            }
        }
    }

    fn scan_shared(&self, shared: &Shared, hay: Haystack<'_>, out: &mut [Vec<u32>]) {
        let bytes = hay.bytes;
        let mut cursor = LineCursor::new(hay);
        let mut pos = 0;
        while pos < bytes.len() {
            let Some(hit) = shared.candidates.find(bytes, pos, bytes.len()) else {
                break;
            };
            // No key occurs in pos..hit, so no needle does either; the
            // line of the hit starts after the last line break there (the
            // regions pos..hit of successive lines do not overlap).
            work::add(hit - pos);
            let start = memchr::memrchr(b'\n', &bytes[pos..hit]).map_or(pos, |i| pos + i + 1);
            let end = line_end(bytes, hit);
            let line = cursor.line_at(hit);
            self.scan_candidate_line(shared, bytes, start..end, hit, line, out);
            pos = end + 1;
        }
    }

    /// The line `span` from its first key position `at` on.
    fn scan_candidate_line(
        &self,
        shared: &Shared,
        bytes: &[u8],
        span: Range<usize>,
        mut at: usize,
        line: u32,
        out: &mut [Vec<u32>],
    ) {
        let end = span.end;
        let mut matched_on_line = 0;
        for _ in 0..PROBES {
            for ((needle, users), &offset) in self
                .needles
                .iter()
                .zip(&self.users)
                .zip(&shared.key_offsets)
            {
                // The needle placed so that its key starts at `at`.
                let Some(start) = at.checked_sub(offset).filter(|&s| s >= span.start) else {
                    continue;
                };
                // Stops at the line end: a compare costs at most the line.
                work::add(needle.len().min(end - start));
                if bytes[start..end].starts_with(needle) {
                    matched_on_line += record(users, bytes, start, needle.len(), line, out);
                }
            }
            if matched_on_line == self.query_count {
                return;
            }
            match shared.candidates.find(bytes, at + 1, end) {
                Some(next) => at = next,
                None => return,
            }
        }
        // Every key position before `at` was probed, so a needle not yet
        // found has its key at `at` or later and starts at most
        // `max_key_offset` bytes before it.
        let from = at.saturating_sub(shared.max_key_offset).max(span.start);
        if end - from > LONG_LINE {
            self.scan_long_line(bytes, from..end, line, out);
        } else {
            self.scan_line(&shared.exact, bytes, from..end, line, matched_on_line, out);
        }
    }

    /// Every occurrence of every needle in `span` (a line's tail), until
    /// every query of the group has the line (`matched_on_line` have it).
    fn scan_line(
        &self,
        exact: &AhoCorasick,
        bytes: &[u8],
        span: Range<usize>,
        line: u32,
        mut matched_on_line: usize,
        out: &mut [Vec<u32>],
    ) {
        // One automaton step per byte, plus one per reported occurrence.
        work::add(span.len());
        let input = Input::new(bytes).span(span);
        let mut state = OverlappingState::start();
        loop {
            exact.find_overlapping(input.clone(), &mut state);
            let Some(found) = state.get_match() else {
                break;
            };
            work::add(1);
            let users = &self.users[found.pattern().as_usize()];
            matched_on_line += record(users, bytes, found.start(), found.len(), line, out);
            if matched_on_line == self.query_count {
                break;
            }
        }
    }

    /// The same answer as [`Self::scan_line`], one needle at a time.
    fn scan_long_line(&self, bytes: &[u8], span: Range<usize>, line: u32, out: &mut [Vec<u32>]) {
        for ((finder, needle), users) in self.finders.iter().zip(&self.needles).zip(&self.users) {
            let mut pos = span.start;
            loop {
                let found = finder.find(&bytes[pos..span.end]);
                work::add(found.map_or(span.end - pos, |at| at + needle.len()));
                let Some(at) = found else { break };
                let start = pos + at;
                record(users, bytes, start, needle.len(), line, out);
                if users.iter().all(|&(q, _)| out[q].last() == Some(&line)) {
                    break;
                }
                // As in `scan_one`: only symbol users are left.
                pos = start + needle.len();
            }
        }
    }
}

impl Shared {
    fn build(needles: &[Vec<u8>], folded: bool, sample: &[u8]) -> CoreResult<Self> {
        let too_many = |_| CoreError::InvalidArgument {
            what: "too many search patterns",
        };
        let offsets = if sample.is_empty() {
            needles.iter().map(|n| candidate_key(n).0).collect()
        } else {
            choose_keys(needles, sample, folded)
        };
        let mut keys: Vec<&[u8]> = Vec::new();
        let mut key_offsets = Vec::with_capacity(needles.len());
        for (needle, &offset) in needles.iter().zip(&offsets) {
            let len = needle.len().min(KEY_LEN).min(PREFIX_CAP);
            let key = &needle[offset..offset + len];
            key_offsets.push(offset);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let packed = || {
            packed::Config::new()
                .match_kind(packed::MatchKind::LeftmostFirst)
                .builder()
                .extend(&keys)
                .build()
        };
        let candidates = match keys.as_slice() {
            [one] => Candidates::One(Box::new(memmem::Finder::new(one).into_owned())),
            _ => match packed() {
                Some(searcher) => Candidates::Packed(Box::new(searcher)),
                None => Candidates::Many(
                    AhoCorasick::builder()
                        .match_kind(MatchKind::LeftmostFirst)
                        .build(&keys)
                        .map_err(too_many)?,
                ),
            },
        };
        // No prefilter: a prefilter verifies whole needles at every
        // candidate position, which is what made repeating text slow. A
        // contiguous NFA, not a DFA: it only runs on the rest of undecided
        // candidate lines, and a DFA costs states x byte classes to build
        // (40 ms for 3 KB of needles, once per batch).
        let exact = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .prefilter(false)
            .build(needles)
            .map_err(too_many)?;
        Ok(Shared {
            candidates,
            max_key_offset: key_offsets.iter().copied().max().unwrap_or(0),
            key_offsets,
            exact,
        })
    }
}

fn scan_one(
    finder: &memmem::Finder<'_>,
    needle: &[u8],
    users: &[(usize, bool)],
    hay: Haystack<'_>,
    out: &mut [Vec<u32>],
) {
    let bytes = hay.bytes;
    let mut cursor = LineCursor::new(hay);
    let mut pos = 0;
    while pos < bytes.len() {
        let found = finder.find(&bytes[pos..]);
        work::add(found.map_or(bytes.len() - pos, |at| at + needle.len()));
        let Some(found) = found else {
            break;
        };
        let start = pos + found;
        let line = cursor.line_at(start);
        record(users, bytes, start, needle.len(), line, out);
        let line_done = users.iter().all(|&(q, _)| out[q].last() == Some(&line));
        pos = if line_done {
            line_end(bytes, start) + 1
        } else {
            // Only symbol users are left, and this occurrence failed a
            // boundary for them: one starting inside it would follow an
            // identifier byte and fail too (module doc).
            start + needle.len()
        };
    }
}

/// Adds `line` to every user query that accepts this occurrence and does
/// not have the line yet; returns how many did.
fn record(
    users: &[(usize, bool)],
    bytes: &[u8],
    start: usize,
    len: usize,
    line: u32,
    out: &mut [Vec<u32>],
) -> usize {
    let mut added = 0;
    for &(query, is_symbol) in users {
        let lines = &mut out[query];
        if lines.last() == Some(&line) {
            continue;
        }
        if is_symbol && !at_token_boundary(bytes, start, start + len) {
            continue;
        }
        lines.push(line);
        added += 1;
    }
    added
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |i| from + i)
}

/// Line numbers for a forward scan: counts newlines since the previous hit
/// when it is near, asks the block index when it is far.
struct LineCursor<'a> {
    hay: Haystack<'a>,
    pos: usize,
    line: u32,
}

impl<'a> LineCursor<'a> {
    const NEAR: usize = 4096;

    fn new(hay: Haystack<'a>) -> Self {
        LineCursor {
            hay,
            pos: 0,
            line: 0,
        }
    }

    fn line_at(&mut self, offset: usize) -> u32 {
        self.line = if offset - self.pos <= Self::NEAR {
            self.line + count_newlines(&self.hay.bytes[self.pos..offset]) as u32
        } else {
            self.hay.index.line_of(self.hay.bytes, offset)
        };
        self.pos = offset;
        self.line
    }
}

pub(crate) fn at_token_boundary(hay: &[u8], start: usize, end: usize) -> bool {
    let before_ok = start == 0 || !is_identifier_byte(hay[start - 1]);
    let after_ok = end >= hay.len() || !is_identifier_byte(hay[end]);
    before_ok && after_ok
}

#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub offset: usize,
    pub limit: usize,
}

/// One query's answer over several texts, in the requested text order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchPage {
    pub total: usize,
    pub per_text_totals: Vec<usize>,
    /// (text index, 0-based line index) of the page's lines.
    pub hits: Vec<(usize, u32)>,
}

/// Runs every query over every text in one pass per text and pattern group,
/// then cuts each query's page. Only line indexes are kept: no line text is
/// built for lines outside a page. Texts are scanned on up to `threads`
/// threads (0 = every core); the answer does not depend on the thread count.
pub fn search(
    texts: &[&SourceText],
    queries: &CompiledQueries,
    pages: &[Page],
    threads: usize,
) -> CoreResult<Vec<SearchPage>> {
    if pages.len() != queries.len() {
        return Err(CoreError::InvalidArgument {
            what: "one page per query is required",
        });
    }
    let per_text = parallel_map(texts, threads, |text| queries.matching_lines(text));
    Ok(cut_pages(per_text, pages))
}

/// Cuts each query's page from the matching lines of every text, in text
/// order (`per_text[t][q]` = 0-based lines of text `t` matching query `q`,
/// as [`CompiledQueries::matching_lines`] returns them).
pub fn cut_pages(per_text: Vec<Vec<Vec<u32>>>, pages: &[Page]) -> Vec<SearchPage> {
    let mut results: Vec<SearchPage> = vec![SearchPage::default(); pages.len()];
    for (text_index, lines) in per_text.into_iter().enumerate() {
        for ((result, page), found) in results.iter_mut().zip(pages).zip(lines) {
            let before = result.total;
            result.total += found.len();
            result.per_text_totals.push(found.len());
            // Global positions before..total belong to this text.
            let window_end = page.offset.saturating_add(page.limit);
            let from = page.offset.max(before);
            let to = window_end.min(result.total);
            if from < to {
                result.hits.extend(
                    found[from - before..to - before]
                        .iter()
                        .map(|&l| (text_index, l)),
                );
            }
        }
    }
    results
}

/// Parses, compiles and runs a batch of `(mode, pattern, page)` queries
/// over `texts`: the whole of a `search_lines` call.
pub fn search_batch(
    texts: &[&SourceText],
    queries: &[(&str, &str, Page)],
    threads: usize,
) -> CoreResult<Vec<SearchPage>> {
    let parsed = queries
        .iter()
        .map(|&(mode, pattern, _)| Query::new(SearchMode::parse(mode)?, pattern))
        .collect::<CoreResult<Vec<_>>>()?;
    let pages: Vec<Page> = queries.iter().map(|&(_, _, page)| page).collect();
    let compiled = CompiledQueries::with_sample(&parsed, &key_sample(texts))?;
    search(texts, &compiled, &pages, threads)
}

#[cfg(test)]
mod tests;
