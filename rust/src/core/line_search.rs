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
//!
//! Patterns never contain a line terminator, so a match never spans lines.
//!
//! # How one pass serves many queries, in time linear in the text
//! All case-sensitive patterns (literal and symbol) form one group, all
//! folded patterns a second one searched over the folded text.
//!
//! A group of several needles is searched in two stages. A leftmost-first
//! multi-pattern searcher (SIMD "Teddy" for small sets) over the needles'
//! first [`PREFIX_CAP`] bytes finds the next line that may hold a hit. In
//! that line, the first [`PROBES`] candidates are checked by comparing every
//! needle there (a compare stops at the line end); if the line is still
//! undecided, its rest is run once through an overlapping Aho-Corasick
//! automaton over the whole needles (no prefilter), which reports every
//! occurrence of every needle, overlapping ones included, so a symbol
//! occurrence rejected at a token boundary never hides a later accepted
//! one. The line is left as soon as every query of the group has it, and
//! the search resumes at the next line. Each byte is read a bounded number
//! of times: the candidate search verifies at most [`PREFIX_CAP`] bytes per
//! position, the probes compare at most [`PROBES`] times per needle and
//! line, the automaton is one step per byte plus one step per reported
//! occurrence (at most one per needle and byte).
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
use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind};
use std::ops::Range;

use memchr::memmem;

use super::error::{CoreError, CoreResult};
use super::parallel::parallel_map;
use super::text::{count_newlines, fold_case, Haystack, SourceText};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Literal,
    LiteralIgnoreCase,
    Symbol,
}

impl SearchMode {
    pub fn parse(name: &str) -> CoreResult<Self> {
        match name {
            "literal" => Ok(SearchMode::Literal),
            "literal_ignore_case" => Ok(SearchMode::LiteralIgnoreCase),
            "symbol" => Ok(SearchMode::Symbol),
            _ => Err(CoreError::InvalidArgument {
                what: "unknown search mode",
            }),
        }
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
        let needle = match mode {
            SearchMode::LiteralIgnoreCase => fold_case(pattern.as_bytes(), pattern.is_ascii()),
            _ => pattern.as_bytes().to_vec(),
        };
        Ok(Query { mode, needle })
    }

    pub fn mode(&self) -> SearchMode {
        self.mode
    }
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
    /// Reports every occurrence of every needle in a line.
    exact: AhoCorasick,
}

enum Candidates {
    /// All needles share their first [`PREFIX_CAP`] bytes: one `memmem`
    /// (a one-pattern automaton gets no SIMD prefilter and is several times
    /// slower on real text).
    One(Box<memmem::Finder<'static>>),
    /// Leftmost-first over the distinct prefixes (Teddy for small sets).
    Many(AhoCorasick),
}

impl Candidates {
    /// Start of the leftmost prefix occurrence in `bytes[from..to]`.
    fn find(&self, bytes: &[u8], from: usize, to: usize) -> Option<usize> {
        let found = match self {
            Candidates::One(finder) => finder.find(&bytes[from..to]).map(|at| from + at),
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

/// Candidate needles are cut to this many bytes, which bounds what the
/// candidate search verifies per text position; 16 bytes keep real needles
/// selective (`#include <vector>` is not just `#include`).
pub const PREFIX_CAP: usize = 16;

impl CompiledQueries {
    pub fn new(queries: &[Query]) -> CoreResult<Self> {
        let sensitive = queries
            .iter()
            .enumerate()
            .filter(|(_, q)| q.mode != SearchMode::LiteralIgnoreCase);
        let folded = queries
            .iter()
            .enumerate()
            .filter(|(_, q)| q.mode == SearchMode::LiteralIgnoreCase);
        Ok(CompiledQueries {
            count: queries.len(),
            case_sensitive: PatternGroup::build(sensitive, true)?,
            // Lower-cased text is full of bytes 0x61..0x7A, where the SIMD
            // multi-pattern fingerprints lose their selectivity (measured
            // 10-20x slower than one memmem pass per needle), so folded
            // needles are always searched one by one.
            folded: PatternGroup::build(folded, false)?,
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
    fn build<'q>(
        queries: impl Iterator<Item = (usize, &'q Query)>,
        allow_shared: bool,
    ) -> CoreResult<Option<Self>> {
        let mut needles: Vec<Vec<u8>> = Vec::new();
        let mut users: Vec<Vec<(usize, bool)>> = Vec::new();
        let mut query_count = 0;
        for (index, query) in queries {
            query_count += 1;
            let is_symbol = query.mode == SearchMode::Symbol;
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
        let shared = if allow_shared && needles.len() > 1 {
            Some(Shared::build(&needles)?)
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
            let Some(start) = shared.candidates.find(bytes, pos, bytes.len()) else {
                break;
            };
            // No needle prefix starts in pos..start, so no needle either.
            let end = line_end(bytes, start);
            let line = cursor.line_at(start);
            self.scan_candidate_line(shared, bytes, start, end, line, out);
            pos = end + 1;
        }
    }

    /// The line `..end` from its first candidate `at` on.
    fn scan_candidate_line(
        &self,
        shared: &Shared,
        bytes: &[u8],
        mut at: usize,
        end: usize,
        line: u32,
        out: &mut [Vec<u32>],
    ) {
        let mut matched_on_line = 0;
        for _ in 0..PROBES {
            for (needle, users) in self.needles.iter().zip(&self.users) {
                // Stops at the line end: a compare costs at most the line.
                work::add(needle.len().min(end - at));
                if bytes[at..end].starts_with(needle) {
                    matched_on_line += record(users, bytes, at, needle.len(), line, out);
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
        if end - at > LONG_LINE {
            self.scan_long_line(bytes, at..end, line, out);
        } else {
            self.scan_line(&shared.exact, bytes, at..end, line, matched_on_line, out);
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
    fn build(needles: &[Vec<u8>]) -> CoreResult<Self> {
        let too_many = |_| CoreError::InvalidArgument {
            what: "too many search patterns",
        };
        let mut prefixes: Vec<&[u8]> = Vec::new();
        for needle in needles {
            let prefix = &needle[..needle.len().min(PREFIX_CAP)];
            if !prefixes.contains(&prefix) {
                prefixes.push(prefix);
            }
        }
        let candidates = match prefixes.as_slice() {
            [one] => Candidates::One(Box::new(memmem::Finder::new(one).into_owned())),
            _ => Candidates::Many(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostFirst)
                    .build(&prefixes)
                    .map_err(too_many)?,
            ),
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
        Ok(Shared { candidates, exact })
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

fn at_token_boundary(hay: &[u8], start: usize, end: usize) -> bool {
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
    let mut results: Vec<SearchPage> = vec![SearchPage::default(); queries.len()];
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
    Ok(results)
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
    search(texts, &CompiledQueries::new(&parsed)?, &pages, threads)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> SourceText {
        SourceText::decode(s.as_bytes().to_vec()).unwrap()
    }

    fn run(s: &str, queries: &[(SearchMode, &str)]) -> Vec<Vec<u32>> {
        let qs: Vec<Query> = queries
            .iter()
            .map(|(m, p)| Query::new(*m, p).unwrap())
            .collect();
        CompiledQueries::new(&qs).unwrap().matching_lines(&text(s))
    }

    use SearchMode::*;

    #[test]
    fn literal_lines_once_each() {
        assert_eq!(run("ab ab\nx\nab", &[(Literal, "ab")]), vec![vec![0, 2]]);
    }

    #[test]
    fn overlapping_patterns_are_all_found() {
        let s = "foobar\nfoo\nbar\nxfoobarx";
        let got = run(
            s,
            &[
                (Literal, "foo"),
                (Literal, "foobar"),
                (Literal, "oba"),
                (Symbol, "foo"),
            ],
        );
        assert_eq!(got, vec![vec![0, 1, 3], vec![0, 3], vec![0, 3], vec![1]]);
    }

    #[test]
    fn symbol_boundaries() {
        let s = "foo\nfoo_bar\n(foo)\nxfoo\nfoo9\né foo\n_foo foo";
        assert_eq!(run(s, &[(Symbol, "foo")]), vec![vec![0, 2, 5, 6]]);
    }

    #[test]
    fn ignore_case_unicode() {
        let s = "STRASSE\nÄrger\n\u{212A}elvin\nkelvin";
        let got = run(
            s,
            &[
                (LiteralIgnoreCase, "ärger"),
                (LiteralIgnoreCase, "KELVIN"),
                (LiteralIgnoreCase, "sse"),
            ],
        );
        assert_eq!(got, vec![vec![1], vec![2, 3], vec![0]]);
    }

    #[test]
    fn rejects_bad_patterns() {
        assert!(Query::new(Literal, "").is_err());
        assert!(Query::new(Literal, "a\nb").is_err());
        assert!(Query::new(Symbol, "9abc").is_err());
        assert!(Query::new(Symbol, "a-b").is_err());
        assert!(Query::new(Symbol, "_ok9").is_ok());
    }

    #[test]
    fn pages_span_texts_in_order() {
        let a = text("x\nx\nx");
        let b = text("x\nno\nx");
        let qs = CompiledQueries::new(&[Query::new(Literal, "x").unwrap()]).unwrap();
        let got = search(
            &[&a, &b],
            &qs,
            &[Page {
                offset: 2,
                limit: 2,
            }],
            2,
        )
        .unwrap();
        assert_eq!(got[0].total, 5);
        assert_eq!(got[0].per_text_totals, vec![3, 2]);
        assert_eq!(got[0].hits, vec![(0, 2), (1, 0)]);
    }

    /// The line model and the three modes, one line at a time.
    fn reference(s: &str, queries: &[(SearchMode, String)]) -> Vec<Vec<u32>> {
        let lines: Vec<&str> = s.split('\n').collect();
        let lines = if s.ends_with('\n') || s.is_empty() {
            &lines[..lines.len() - 1]
        } else {
            &lines[..]
        };
        let ident = |c: Option<char>| c.is_some_and(|c| c == '_' || c.is_ascii_alphanumeric());
        queries
            .iter()
            .map(|(mode, pattern)| {
                (0u32..)
                    .zip(lines)
                    .filter(|(_, line)| match mode {
                        Literal => line.contains(pattern.as_str()),
                        LiteralIgnoreCase => line.to_lowercase().contains(&pattern.to_lowercase()),
                        Symbol => line.match_indices(pattern.as_str()).any(|(at, m)| {
                            !ident(line[..at].chars().next_back())
                                && !ident(line[at + m.len()..].chars().next())
                        }),
                    })
                    .map(|(n, _)| n)
                    .collect()
            })
            .collect()
    }

    /// A fixed xorshift stream: the same cases on every run.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
        fn string(&mut self, alphabet: &[&str], max: usize) -> String {
            let len = self.below(max) + 1;
            (0..len)
                .map(|_| alphabet[self.below(alphabet.len())])
                .collect()
        }
    }

    /// Random batches over random text from a few letters, so that needles
    /// overlap each other and themselves; `runs` repeats chunks into lines
    /// longer than [`LONG_LINE`].
    fn compare_random_cases(seed: u64, cases: usize, max_chunks: usize, max_repeat: usize) {
        let text_alphabet = ["a", "a", "b", "_", " ", "\n", "A", "ä"];
        let needle_alphabet = ["a", "a", "b", "_"];
        let mut rng = Rng(seed);
        for _ in 0..cases {
            let s: String = (0..rng.below(max_chunks) + 1)
                .map(|_| {
                    rng.string(&text_alphabet, 8)
                        .repeat(rng.below(max_repeat) + 1)
                })
                .collect();
            let count = rng.below(5) + 1;
            let queries: Vec<(SearchMode, String)> = (0..count)
                .map(|_| {
                    let mode = [Literal, LiteralIgnoreCase, Symbol][rng.below(3)];
                    let mut pattern = rng.string(&needle_alphabet, 6);
                    if mode == LiteralIgnoreCase && rng.below(2) == 0 {
                        pattern = pattern.to_uppercase();
                    }
                    (mode, pattern)
                })
                .collect();
            let borrowed: Vec<(SearchMode, &str)> =
                queries.iter().map(|(m, p)| (*m, p.as_str())).collect();
            assert_eq!(
                run(&s, &borrowed),
                reference(&s, &queries),
                "{s:?} {queries:?}"
            );
        }
    }

    #[test]
    fn equals_the_reference_on_repeating_text() {
        compare_random_cases(0x9E37_79B9_7F4A_7C15, 3000, 8, 4);
    }

    #[test]
    fn equals_the_reference_on_long_repeating_lines() {
        // Chunks without a line break repeated up to 2000 times: lines well
        // beyond LONG_LINE take the needle-by-needle path.
        compare_random_cases(0xD1B5_4A32_D192_ED03, 150, 6, 2000);
    }

    #[test]
    fn symbol_rejected_then_accepted_on_one_line() {
        // The first occurrences fail a boundary; a later, overlapping one
        // of the same or another needle counts.
        let s = "aaa aa\nfoofoo foo\nxfoo_ foo";
        let got = run(s, &[(Symbol, "aa"), (Symbol, "foo"), (Literal, "oof")]);
        assert_eq!(got, vec![vec![0], vec![1, 2], vec![1]]);
    }

    #[test]
    fn long_needles_longer_than_the_candidate_prefix() {
        let long = "x".repeat(PREFIX_CAP) + "tail";
        let other = "x".repeat(PREFIX_CAP) + "other";
        let s = format!("{}\n{long}\n{}{other}", "x".repeat(40), "x".repeat(7));
        let got = run(&s, &[(Literal, &long), (Literal, &other)]);
        assert_eq!(got, vec![vec![1], vec![2]]);
    }

    /// Bytes read per byte of text and pattern that the search may spend:
    /// a constant. Restarting one byte after each candidate and comparing
    /// every needle there (the old loop) reads ~pattern length per byte of a
    /// repeating run: about 1000 here.
    const WORK_PER_BYTE: u64 = 8;

    /// The bytes read by searching `s` for `queries`, with the answer.
    fn counted(s: &str, queries: &[(SearchMode, &str)]) -> (Vec<Vec<u32>>, u64) {
        let t = text(s);
        let compiled = CompiledQueries::new(
            &queries
                .iter()
                .map(|&(m, p)| Query::new(m, p).unwrap())
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let _ = t.haystack();
        work::take();
        let got = compiled.matching_lines(&t);
        (got, work::take())
    }

    fn assert_linear(s: &str, queries: &[(SearchMode, &str)], want: Vec<Vec<u32>>) {
        let (got, read) = counted(s, queries);
        assert_eq!(got, want);
        let size = (s.len() + queries.iter().map(|(_, p)| p.len()).sum::<usize>()) as u64;
        assert!(
            read <= WORK_PER_BYTE * size,
            "read {read} bytes for {size} bytes of text and patterns"
        );
    }

    /// Each case is one long line of repeating text that every needle
    /// overlaps; a search quadratic in it reads run x pattern length.
    #[test]
    fn repeating_text_is_read_a_bounded_number_of_times() {
        let run_of_a = "a".repeat(256 * 1024);
        let a1000b = "a".repeat(1000) + "b";
        let a1024 = "a".repeat(1024);
        assert_linear(
            &run_of_a,
            &[(Literal, &a1000b), (Literal, &a1024)],
            vec![vec![], vec![0]],
        );
        assert_linear(
            &run_of_a,
            &[(Symbol, &a1024), (Symbol, &a1000b)],
            vec![vec![]; 2],
        );
        assert_linear(&run_of_a, &[(Symbol, &a1024)], vec![vec![]]);
        let upper = "A".repeat(256 * 1024);
        assert_linear(
            &upper,
            &[(LiteralIgnoreCase, &a1000b), (LiteralIgnoreCase, &a1024)],
            vec![vec![], vec![0]],
        );
        let zeros = "0,".repeat(128 * 1024);
        assert_linear(
            &zeros,
            &[
                (Literal, &"0,".repeat(512)),
                (Literal, &("0,".repeat(511) + "0x")),
            ],
            vec![vec![0], vec![]],
        );
        // Short lines (the automaton path, not the long-line one).
        let lines = format!("{}\n", "a".repeat(4000)).repeat(64);
        assert_linear(
            &lines,
            &[(Literal, &a1000b), (Symbol, &a1024)],
            vec![vec![]; 2],
        );
    }

    /// A DFA over these needles costs length x length per needle to build
    /// (its failure chains are as deep as the run): 320 ms in a release
    /// build for 16 needles at the router's 1024-character limit. The exact
    /// stage must be the contiguous NFA, whose size is linear in the needles.
    #[test]
    fn long_repeating_needles_build_a_linear_automaton() {
        let needles: Vec<String> = (b'a'..b'a' + 16)
            .map(|c| (c as char).to_string().repeat(1023) + "b")
            .collect();
        let queries: Vec<Query> = needles
            .iter()
            .map(|n| Query::new(Literal, n).unwrap())
            .collect();
        let compiled = CompiledQueries::new(&queries).unwrap();
        let exact = &compiled
            .case_sensitive
            .as_ref()
            .and_then(|g| g.shared.as_ref())
            .expect("several needles share the two-stage search")
            .exact;
        assert_eq!(exact.kind(), AhoCorasickKind::ContiguousNFA);
        let needle_bytes: usize = needles.iter().map(String::len).sum();
        assert!(
            exact.memory_usage() <= 64 * needle_bytes,
            "{} bytes of automaton for {needle_bytes} bytes of needles",
            exact.memory_usage()
        );
        assert_eq!(
            compiled.matching_lines(&text("ab\n")),
            vec![Vec::<u32>::new(); 16]
        );
    }
}
