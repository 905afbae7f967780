//! Where a repository's objects are, found without any configuration
//! outside it: the path a caller names is a work tree (with a `.git`
//! directory, or a `gitdir:` file as in a linked worktree or submodule) or a
//! git directory (bare or not). Nothing above that path is searched, and no
//! environment variable (`GIT_DIR`, `GIT_OBJECT_DIRECTORY`, …) is read.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::core::error::{CoreError, CoreResult};

/// Files read here are a few bytes; a larger one is not a git file.
const MAX_POINTER_BYTES: u64 = 64 * 1024;
/// A repository configuration larger than this is refused unread.
const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

fn unavailable(what: &'static str) -> CoreError {
    CoreError::GitRepositoryUnavailable { what }
}

/// The object directory of the repository at `path`, once it is known to
/// hold SHA-1 objects.
pub fn objects_dir(path: &Path) -> CoreResult<PathBuf> {
    let cannot_open = || unavailable("cannot open the repository");
    let dot_git = path.join(".git");
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else if dot_git.is_file() {
        let pointer = read_small(&dot_git, MAX_POINTER_BYTES).ok_or_else(cannot_open)?;
        let target = pointer
            .strip_prefix("gitdir:")
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(cannot_open)?;
        path.join(target)
    } else {
        path.to_path_buf()
    };
    if !git_dir.join("HEAD").is_file() {
        return Err(cannot_open());
    }
    // A linked worktree keeps its objects in the main repository's directory.
    let common_dir = match read_small(&git_dir.join("commondir"), MAX_POINTER_BYTES) {
        Some(relative) if !relative.trim().is_empty() => git_dir.join(relative.trim()),
        _ => git_dir,
    };
    let objects = common_dir.join("objects");
    if !objects.is_dir() {
        return Err(cannot_open());
    }
    let config = common_dir.join("config");
    if config.exists() {
        let text = read_small(&config, MAX_CONFIG_BYTES).ok_or_else(cannot_open)?;
        if !is_sha1_config(&text) {
            return Err(unavailable("only SHA-1 repositories are supported"));
        }
    }
    Ok(objects)
}

/// False when the configuration names an object format other than SHA-1
/// (`extensions.objectFormat`). Conservative: the key under any section, in
/// any case, counts, so a SHA-256 repository is never read as SHA-1.
fn is_sha1_config(text: &str) -> bool {
    text.lines().all(|line| {
        let line = line.trim();
        let Some((key, value)) = line.split_once('=') else {
            return true;
        };
        if !key.trim().eq_ignore_ascii_case("objectformat") {
            return true;
        }
        let value = value.split(['#', ';']).next().unwrap_or("").trim();
        value.trim_matches('"').eq_ignore_ascii_case("sha1")
    })
}

/// The UTF-8 text of a small regular file, or `None`.
fn read_small(path: &Path, max: u64) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(max + 1).read_to_string(&mut text).ok()?;
    (text.len() as u64 <= max).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_format_in_the_configuration() {
        assert!(is_sha1_config("[core]\n\tbare = true\n"));
        assert!(is_sha1_config("[extensions]\n\tobjectformat = sha1\n"));
        assert!(!is_sha1_config("[extensions]\n\tobjectFormat = sha256\n"));
        assert!(!is_sha1_config(
            "[extensions]\nObjectFormat=\"SHA256\" # x\n"
        ));
    }

    #[test]
    fn a_directory_without_a_repository_is_refused() {
        let dir = std::env::temp_dir().join(format!("vba-git-location-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(
            objects_dir(&dir).unwrap_err().code(),
            "repository_unavailable"
        );
        std::fs::write(dir.join(".git"), "not a pointer").unwrap();
        assert_eq!(
            objects_dir(&dir).unwrap_err().code(),
            "repository_unavailable"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
