//! Where the time of benchmark (a) goes, phase by phase, on one thread.
//!
//! Not a test of behaviour: an ignored test that prints medians, run by hand
//! on the ZIP that `benches/bench_search.py` builds, with a `<zip>.refs` file
//! of its members' names, SHA-256 and sizes (see docs/benchmarks.md):
//!
//! ```text
//! VBA_PHASE_ZIP=/path/sources.zip cargo test --release --lib phase_profile -- --ignored --nocapture
//! ```

use std::fs::File;
use std::time::{Duration, Instant};

use aho_corasick::{packed, AhoCorasick, Input, MatchKind, Span};

use super::line_search::{
    candidate_key, key_sample, CompiledQueries, Query, SearchMode, PREFIX_CAP,
};
use super::text::{fold_case, fold_case_into, SourceText};
use super::zip_stream::{parse_sha256_hex, Expected, ZipArchive};

const QUERIES: [(SearchMode, &str); 16] = [
    (SearchMode::Literal, "#include <vector>"),
    (SearchMode::Literal, "static_assert("),
    (SearchMode::Literal, "std::unique_ptr"),
    (SearchMode::Literal, "return nullptr;"),
    (SearchMode::Literal, "__attribute__ ((__deprecated__"),
    (SearchMode::Literal, "Wolpertinger"),
    (SearchMode::Literal, "typedef struct"),
    (SearchMode::Literal, "noexcept(true)"),
    (SearchMode::LiteralIgnoreCase, "todo"),
    (SearchMode::LiteralIgnoreCase, "deprecated"),
    (SearchMode::LiteralIgnoreCase, "Thread-safe"),
    (SearchMode::LiteralIgnoreCase, "copyright"),
    (SearchMode::Symbol, "allocator_traits"),
    (SearchMode::Symbol, "memcpy"),
    (SearchMode::Symbol, "pthread_mutex_lock"),
    (SearchMode::Symbol, "SIGSEGV"),
];

/// (minimum, median) of 21 runs after one warm-up run: on a shared
/// machine the minimum is the figure least disturbed by other work.
fn median(mut f: impl FnMut()) -> (Duration, Duration) {
    f();
    let mut times: Vec<Duration> = (0..21)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    times.sort();
    (times[0], times[times.len() / 2])
}

/// The queries of `filter`'s modes, keys chosen from `sample` (by byte
/// ranks alone when it is empty).
fn compiled(filter: impl Fn(SearchMode) -> bool, sample: &[u8]) -> CompiledQueries {
    let queries: Vec<Query> = QUERIES
        .iter()
        .filter(|(mode, _)| filter(*mode))
        .map(|(mode, pattern)| Query::new(*mode, pattern).unwrap())
        .collect();
    CompiledQueries::with_sample(&queries, sample).unwrap()
}

#[test]
#[ignore = "prints a timing breakdown; needs VBA_PHASE_ZIP"]
fn phase_profile() {
    let path = std::env::var("VBA_PHASE_ZIP").expect("VBA_PHASE_ZIP");
    let archive = ZipArchive::open(File::open(&path).unwrap()).unwrap();
    // `<zip>.refs`: one "name sha256 size" line per member (written next to
    // the ZIP, e.g. by Python's zipfile + hashlib).
    let refs = std::fs::read_to_string(format!("{path}.refs")).expect("<zip>.refs");
    let mut members = Vec::new();
    for line in refs.lines() {
        let mut fields = line.split(' ');
        let (Some(name), Some(sha), Some(size)) = (fields.next(), fields.next(), fields.next())
        else {
            panic!("bad refs line");
        };
        let expected = Expected {
            sha256: parse_sha256_hex(sha).unwrap(),
            size: size.parse().unwrap(),
        };
        let data = archive.read_member(name, &expected, u64::MAX).unwrap();
        members.push((name.to_owned(), expected, data));
    }
    let total: usize = members.iter().map(|m| m.2.len()).sum();
    println!("{} members, {} bytes", members.len(), total);
    let mut rows: Vec<(&str, (Duration, Duration))> = Vec::new();
    rows.push((
        "verify: inflate + CRC + SHA-256, output discarded (the floor)",
        median(|| {
            for (name, expected, _) in &members {
                archive.verify_member(name, expected, u64::MAX).unwrap();
            }
        }),
    ));
    rows.push((
        "read_member_into a fresh Vec per member (inflate + keep)",
        median(|| {
            for (name, expected, _) in &members {
                let mut out = Vec::new();
                archive
                    .read_member_into(name, expected, u64::MAX, &mut out)
                    .unwrap();
            }
        }),
    ));
    rows.push((
        "read_member_into one reused Vec (no fresh pages)",
        median(|| {
            let mut out = Vec::new();
            for (name, expected, _) in &members {
                archive
                    .read_member_into(name, expected, u64::MAX, &mut out)
                    .unwrap();
            }
        }),
    ));
    rows.push((
        "copy of the members only (memcpy into fresh Vecs)",
        median(|| {
            for (_, _, data) in &members {
                std::hint::black_box(data.clone());
            }
        }),
    ));
    rows.push((
        "decode: copy + NUL, UTF-8, CR, ASCII checks, newline count",
        median(|| {
            for (_, _, data) in &members {
                std::hint::black_box(SourceText::decode(data.clone()).unwrap());
            }
        }),
    ));
    let texts: Vec<SourceText> = members
        .iter()
        .map(|(_, _, data)| SourceText::decode(data.clone()).unwrap())
        .collect();
    rows.push((
        "line index (fresh texts: copy + decode + index)",
        median(|| {
            for (_, _, data) in &members {
                let text = SourceText::decode(data.clone()).unwrap();
                std::hint::black_box(text.haystack());
            }
        }),
    ));
    let text_refs: Vec<&SourceText> = texts.iter().collect();
    let sample = key_sample(&text_refs);
    let all_queries: Vec<Query> = QUERIES
        .iter()
        .map(|(mode, pattern)| Query::new(*mode, pattern).unwrap())
        .collect();
    let sampled = compiled(|_| true, &sample);
    let all = compiled(|_| true, &[]);
    let sensitive = compiled(|m| m != SearchMode::LiteralIgnoreCase, &sample);
    let literal = compiled(|m| m == SearchMode::Literal, &sample);
    let folded = compiled(|m| m == SearchMode::LiteralIgnoreCase, &sample);
    rows.push((
        "key sample: 32 x 1 KiB of the texts",
        median(|| {
            std::hint::black_box(key_sample(&text_refs));
        }),
    ));
    rows.push((
        "compile the 16 queries with keys by sample",
        median(|| {
            std::hint::black_box(CompiledQueries::with_sample(&all_queries, &sample).unwrap());
        }),
    ));
    for (label, queries) in [
        (
            "search: all 16 queries, keys by sample (search_lines)",
            &sampled,
        ),
        ("search: all 16 queries, keys by ranks (before)", &all),
        ("search: all 16, keys by sample (again)", &sampled),
        ("search: all 16, keys by ranks (before, again)", &all),
        (
            "search: 12 case-sensitive (8 literal + 4 symbol), keys by sample",
            &sensitive,
        ),
        ("search: 8 literal, keys by sample", &literal),
        (
            "search: 4 case-insensitive (fold + one pass over 4 keys), keys by sample",
            &folded,
        ),
    ] {
        rows.push((
            label,
            median(|| {
                for text in &texts {
                    std::hint::black_box(queries.matching_lines(text));
                }
            }),
        ));
    }
    // Stage 1 of the case-sensitive group alone: the candidate search over
    // the 16-byte prefixes, one hit per line (what line_search builds).
    let prefixes: Vec<&[u8]> = QUERIES
        .iter()
        .filter(|(mode, _)| *mode != SearchMode::LiteralIgnoreCase)
        .map(|(_, p)| &p.as_bytes()[..p.len().min(PREFIX_CAP)])
        .collect();
    let candidates = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(&prefixes)
        .unwrap();
    let keys: Vec<&[u8]> = QUERIES
        .iter()
        .filter(|(mode, _)| *mode != SearchMode::LiteralIgnoreCase)
        .map(|(_, p)| candidate_key(p.as_bytes()).1)
        .collect();
    println!(
        "candidate keys by ranks: {:?}",
        keys.iter()
            .map(|k| String::from_utf8_lossy(k))
            .collect::<Vec<_>>()
    );
    let key_searcher = packed::Config::new()
        .match_kind(packed::MatchKind::LeftmostFirst)
        .builder()
        .extend(&keys)
        .build()
        .unwrap();
    let folded_keys: Vec<Vec<u8>> = QUERIES
        .iter()
        .filter(|(mode, _)| *mode == SearchMode::LiteralIgnoreCase)
        .map(|(_, p)| {
            candidate_key(&fold_case(p.as_bytes(), p.is_ascii()))
                .1
                .to_vec()
        })
        .collect();
    println!(
        "folded candidate keys by ranks: {:?}",
        folded_keys
            .iter()
            .map(|k| String::from_utf8_lossy(k))
            .collect::<Vec<_>>()
    );
    let folded_searcher = packed::Config::new()
        .match_kind(packed::MatchKind::LeftmostFirst)
        .builder()
        .extend(&folded_keys)
        .build()
        .unwrap();
    // Lines the candidate search marks (one per line, as line_search
    // resumes at the next line after a key hit): what the rank table
    // decides.
    let marked = |searcher: &packed::Searcher, bytes: &[u8]| -> usize {
        let mut lines = 0;
        let mut pos = 0;
        while let Some(found) = searcher.find_in(bytes, Span::from(pos..bytes.len())) {
            lines += 1;
            let start = found.start();
            pos = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        }
        lines
    };
    let mut folded_text = Vec::new();
    let (mut sensitive_lines, mut folded_lines) = (0, 0);
    for text in &texts {
        sensitive_lines += marked(&key_searcher, text.as_bytes());
        fold_case_into(text.as_bytes(), text.is_ascii(), &mut folded_text);
        folded_lines += marked(&folded_searcher, &folded_text);
    }
    println!(
        "candidate lines: {sensitive_lines} for the 12 case-sensitive keys, \
         {folded_lines} for the 4 folded keys"
    );
    rows.push((
        "  the candidate search over the 12 keys by ranks (Teddy, before)",
        median(|| {
            for text in &texts {
                let bytes = text.as_bytes();
                let mut pos = 0;
                while let Some(found) = key_searcher.find_in(bytes, Span::from(pos..bytes.len())) {
                    let start = found.start();
                    pos = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
                }
            }
        }),
    ));
    rows.push((
        "  the candidate search over 12 prefixes as before (automaton + Teddy)",
        median(|| {
            for text in &texts {
                let bytes = text.as_bytes();
                let mut pos = 0;
                while let Some(found) = candidates.find(Input::new(bytes).span(pos..bytes.len())) {
                    let start = found.start();
                    pos = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
                }
            }
        }),
    ));
    let mut scratch = Vec::new();
    rows.push((
        "  of which folding (ASCII lower-casing into a reused buffer)",
        median(|| {
            for text in &texts {
                fold_case_into(text.as_bytes(), text.is_ascii(), &mut scratch);
                std::hint::black_box(&scratch);
            }
        }),
    ));
    rows.push((
        "  folding as before: copy, then lower-case the copy",
        median(|| {
            for text in &texts {
                scratch.clear();
                scratch.extend_from_slice(text.as_bytes());
                scratch.make_ascii_lowercase();
                std::hint::black_box(&scratch);
            }
        }),
    ));
    println!("      min    median");
    for (label, (min, median)) in rows {
        println!(
            "{:>9.2} {:>9.2} ms  {label}",
            min.as_secs_f64() * 1000.0,
            median.as_secs_f64() * 1000.0
        );
    }
}
