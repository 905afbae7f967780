//! Line search against a reference implementation, and its work bounds.

use super::*;

fn text(s: &str) -> SourceText {
    SourceText::decode(s.as_bytes().to_vec()).unwrap()
}

fn run(s: &str, queries: &[(SearchMode, &str)]) -> Vec<Vec<u32>> {
    let qs: Vec<Query> = queries
        .iter()
        .map(|(m, p)| Query::new(*m, p).unwrap())
        .collect();
    let t = text(s);
    let got = CompiledQueries::new(&qs).unwrap().matching_lines(&t);
    // Keys chosen from a sample of the text itself (what `search_batch`
    // does) and from an unrelated one: the same answer.
    for sample in [key_sample(&[&t]), b"(;ab_AB\naab".repeat(3)] {
        let sampled = CompiledQueries::with_sample(&qs, &sample).unwrap();
        assert_eq!(sampled.matching_lines(&t), got, "{s:?} {queries:?}");
    }
    got
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
fn word_boundaries_for_numbers() {
    let s = "26290\n126290\n262901\nid=26290;\nx26290\n_26290\n26290_\n(26290)";
    assert_eq!(run(s, &[(Word, "26290")]), vec![vec![0, 3, 7]]);
    let s = "Quest_A\nQUEST_A x\nquest_ab\n\u{212A}quest_a";
    assert_eq!(run(s, &[(WordIgnoreCase, "quest_a")]), vec![vec![0, 1]]);
    assert!(Query::new(Word, "a-b").is_err());
    assert!(Query::new(WordIgnoreCase, "").is_err());
    assert!(Query::new(Word, "9lives").is_ok());
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
    let word = |line: &str, pattern: &str| {
        line.match_indices(pattern).any(|(at, m)| {
            !ident(line[..at].chars().next_back()) && !ident(line[at + m.len()..].chars().next())
        })
    };
    queries
        .iter()
        .map(|(mode, pattern)| {
            (0u32..)
                .zip(lines)
                .filter(|(_, line)| match mode {
                    Literal => line.contains(pattern.as_str()),
                    LiteralIgnoreCase => line.to_lowercase().contains(&pattern.to_lowercase()),
                    Symbol | Word => word(line, pattern),
                    WordIgnoreCase => word(&line.to_lowercase(), &pattern.to_lowercase()),
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
    compare_random_cases_with(
        seed,
        cases,
        max_chunks,
        max_repeat,
        &["a", "a", "b", "_"],
        6,
    );
}

fn compare_random_cases_with(
    seed: u64,
    cases: usize,
    max_chunks: usize,
    max_repeat: usize,
    needle_alphabet: &[&str],
    max_needle: usize,
) {
    let text_alphabet = [
        "a", "a", "b", "_", " ", "\n", "A", "ä", "(", ";", "1", "\u{212A}",
    ];
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
                let mode = [Literal, LiteralIgnoreCase, Symbol, Word, WordIgnoreCase][rng.below(5)];
                let mut pattern = rng.string(needle_alphabet, max_needle);
                if max_needle > KEY_LEN && rng.below(2) == 0 {
                    // A piece of the text itself, so that long needles occur.
                    let chars: Vec<char> = s.chars().collect();
                    let from = rng.below(chars.len());
                    let len = rng.below(max_needle) + 1;
                    let piece: String = chars[from..chars.len().min(from + len)]
                        .iter()
                        .take_while(|&&c| c != '\n')
                        .collect();
                    if !piece.is_empty() {
                        pattern = piece;
                    }
                }
                if mode.whole_word() {
                    // Word bytes only (`Query::new` refuses others).
                    pattern.retain(|c| c == '_' || c.is_ascii_alphanumeric());
                    if mode != Symbol && rng.below(2) == 0 {
                        pattern = pattern.replace('b', "1");
                    }
                    if pattern.is_empty() || (mode == Symbol && !is_identifier(&pattern)) {
                        pattern.insert(0, 'a');
                    }
                }
                if mode.folded() && rng.below(2) == 0 {
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

/// Needles longer than [`KEY_LEN`]: their candidate key is a window inside
/// them (the one with the rare `(` or `;`), so a needle starts before the
/// key position that marks its line, possibly at the line start.
#[test]
fn equals_the_reference_with_keys_inside_long_needles() {
    let alphabet = ["a", "a", "b", "_", "(", ";", "A"];
    compare_random_cases_with(0x2545_F491_4F6C_DD1D, 3000, 8, 4, &alphabet, 20);
    compare_random_cases_with(0x9FB2_1C65_1E98_DF25, 100, 6, 1500, &alphabet, 20);
}

#[test]
fn candidate_keys_are_rare_windows() {
    // A space is the commonest byte: not `typedef `.
    assert_eq!(candidate_key(b"typedef struct"), (1, &b"ypedef s"[..]));
    assert_eq!(candidate_key(b"memcpy"), (0, &b"memcpy"[..]));
    let s = "xx\nab(cd;ef\nzzab(cd;efgh\nab(cd;e";
    let needle = "ab(cd;efgh";
    let (offset, _) = candidate_key(needle.as_bytes());
    assert!(offset > 0, "the key sits inside the needle");
    let got = run(s, &[(Literal, needle), (Literal, "ab(cd;ef")]);
    assert_eq!(got, vec![vec![2], vec![1, 2]]);
}

#[test]
fn keys_by_sample_avoid_common_first_bytes() {
    let needles = vec![b"typedef struct".to_vec(), b"static_assert(".to_vec()];
    // Byte ranks alone pick `ypedef s` and `atic_ass`.
    assert_eq!(candidate_key(&needles[0]).0, 1);
    assert_eq!(candidate_key(&needles[1]).0, 2);
    let sample = b"typedef int t; static int x; typedef long u; static void f();".repeat(4);
    let offsets = choose_keys(&needles, &sample, false);
    let keys: Vec<&[u8]> = needles
        .iter()
        .zip(&offsets)
        .map(|(n, &o)| &n[o..o + KEY_LEN])
        .collect();
    for key in &keys {
        let head = &key[..HEAD_LEN];
        assert!(
            !sample.windows(HEAD_LEN).any(|w| w == head),
            "{:?} starts with a 4-byte run of the sample",
            String::from_utf8_lossy(key)
        );
    }
    // Upper-case sample bytes count for a folded group.
    let folded = choose_keys(&[b"copyright".to_vec()], b"COPYING COPY copy", true);
    assert_eq!(folded, vec![1], "`opyright`, not `copyrigh`");
    // No sample, or none of the heads in it: the rank choice.
    assert_eq!(
        choose_keys(&needles, b"zzzz", false),
        vec![candidate_key(&needles[0]).0, candidate_key(&needles[1]).0]
    );
}

#[test]
fn key_sample_spreads_over_the_texts() {
    let small = [text("ab\n"), text("cd")];
    let refs: Vec<&SourceText> = small.iter().collect();
    assert_eq!(key_sample(&refs), b"ab\ncd");
    let big: Vec<SourceText> = (b'a'..=b'h')
        .map(|c| text(&(c as char).to_string().repeat(100_000)))
        .collect();
    let refs: Vec<&SourceText> = big.iter().collect();
    let sample = key_sample(&refs);
    // 1/128 of 800,000 bytes, in 32 pieces.
    assert_eq!(sample.len(), 800_000 / 128 / SAMPLE_PIECES * SAMPLE_PIECES);
    let huge = [text(&"x".repeat(8 << 20))];
    let refs: Vec<&SourceText> = huge.iter().collect();
    assert_eq!(key_sample(&refs).len(), SAMPLE_MAX);
    for c in b'a'..=b'h' {
        assert!(sample.contains(&c), "a piece of every text");
    }
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
