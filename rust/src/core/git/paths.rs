//! Which repository paths are plain enough to be named, searched and read.
//!
//! One rule set for both sides: a path a query names (`path`,
//! `path_prefix`) and a path listed in a commit's tree. A plain path is
//! UTF-8, at most [`MAX_PATH_CHARS`] characters, relative, `/`-separated, has
//! no backslash, NUL or line break, and no empty, `.`, `..` or `.git`
//! component (`.git` compared ASCII-case-insensitively: on case-insensitive
//! file systems `.GIT` is the same directory). A query prefix may end with
//! one `/` ("this directory"). Trees written by hostile tools can hold names
//! git itself refuses to check out; such entries are never searched or read.

pub const MAX_PATH_CHARS: usize = 1024;

/// The first rule `path` breaks, as a fixed phrase, or `None` when it is plain.
pub fn path_problem(path: &[u8], allow_trailing_slash: bool) -> Option<&'static str> {
    let Ok(text) = std::str::from_utf8(path) else {
        return Some("not_utf8");
    };
    if text.is_empty() {
        return Some("empty");
    }
    // A path has at most as many characters as bytes: most need no count.
    if path.len() > MAX_PATH_CHARS && text.chars().count() > MAX_PATH_CHARS {
        return Some("too_long");
    }
    if path
        .iter()
        .any(|&b| matches!(b, b'\\' | b'\0' | b'\r' | b'\n'))
    {
        return Some("forbidden_character");
    }
    if path[0] == b'/' {
        return Some("absolute");
    }
    let body = match path.strip_suffix(b"/") {
        Some(rest) if allow_trailing_slash => rest,
        _ => path,
    };
    for component in body.split(|&b| b == b'/') {
        match component {
            b"" | b"." => return Some("empty_or_dot_component"),
            b".." => return Some("parent_component"),
            c if c.eq_ignore_ascii_case(b".git") => return Some("git_metadata"),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(p: &str) -> Option<&'static str> {
        path_problem(p.as_bytes(), false)
    }

    #[test]
    fn plain_paths() {
        for p in [
            "a",
            "a/b.c",
            ".gitignore",
            "x/.github/y",
            "a..b",
            "..a",
            "ü/ß",
        ] {
            assert_eq!(problem(p), None, "{p}");
        }
    }

    #[test]
    fn broken_rules() {
        let cases = [
            ("", "empty"),
            ("/a", "absolute"),
            ("a/", "empty_or_dot_component"),
            ("a//b", "empty_or_dot_component"),
            ("./a", "empty_or_dot_component"),
            ("a/..", "parent_component"),
            ("../a", "parent_component"),
            (".git", "git_metadata"),
            ("a/.GiT/config", "git_metadata"),
            ("a\\b", "forbidden_character"),
            ("a\nb", "forbidden_character"),
            ("a\0b", "forbidden_character"),
        ];
        for (p, want) in cases {
            assert_eq!(problem(p), Some(want), "{p:?}");
        }
        assert_eq!(path_problem(b"a/\xff", false), Some("not_utf8"));
        assert_eq!(problem(&"x".repeat(1025)), Some("too_long"));
        // The limit counts characters, not bytes.
        assert_eq!(problem(&"x".repeat(1024)), None);
        assert_eq!(problem(&"ü".repeat(1024)), None);
        assert_eq!(problem(&"ü".repeat(1025)), Some("too_long"));
    }

    #[test]
    fn prefix_may_end_with_one_slash() {
        assert_eq!(path_problem(b"src/", true), None);
        assert_eq!(path_problem(b"src//", true), Some("empty_or_dot_component"));
        assert_eq!(path_problem(b"/", true), Some("absolute"));
    }
}
