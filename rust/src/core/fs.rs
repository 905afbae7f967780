//! Opening the files a caller names, without ever blocking on them.
//!
//! `open(2)` of a FIFO for reading waits until a writer appears, which may be
//! never; opening a device can have side effects. So the path is checked
//! with `stat` first (most non-regular files are refused without being
//! opened), then opened with `O_NONBLOCK | O_NOCTTY` and checked again with
//! `fstat` on the handle (the path may have been replaced in between). Only a
//! regular file is returned. `O_NONBLOCK` has no effect on regular files, so
//! the handle reads normally.

use std::fs::{File, Metadata, OpenOptions};
use std::path::Path;

use super::error::{CoreError, CoreResult};

/// The regular file at `path` (symbolic links followed), opened read-only.
pub fn open_regular_file(path: &Path) -> CoreResult<File> {
    ensure_regular(&std::fs::metadata(path)?)?;
    let file = open_nonblocking(path)?;
    ensure_regular(&file.metadata()?)?;
    Ok(file)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().read(true).open(path)
}

fn ensure_regular(meta: &Metadata) -> CoreResult<()> {
    if meta.is_file() {
        return Ok(());
    }
    Err(CoreError::NotRegularFile {
        kind: file_kind(meta),
    })
}

/// A fixed name for what the path is instead of a regular file.
fn file_kind(meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "fifo";
        }
        if kind.is_socket() {
            return "socket";
        }
        if kind.is_char_device() {
            return "character_device";
        }
        if kind.is_block_device() {
            return "block_device";
        }
    }
    "other"
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Read;

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("vba-fs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = temp_dir("fifo");
        let fifo = dir.join("pipe.zip");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        // No writer ever opens the FIFO: a blocking open would hang here.
        let err = open_regular_file(&fifo).unwrap_err();
        assert_eq!(err, CoreError::NotRegularFile { kind: "fifo" });
        assert_eq!(err.code(), "not_a_regular_file");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_fifo_behind_a_symlink_and_the_handle_check() {
        let dir = temp_dir("link");
        let fifo = dir.join("pipe");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        std::os::unix::fs::symlink(&fifo, dir.join("link.zip")).unwrap();
        let err = open_regular_file(&dir.join("link.zip")).unwrap_err();
        assert_eq!(err, CoreError::NotRegularFile { kind: "fifo" });
        // The second check alone (the path swapped after `stat`) also
        // refuses it, and opening did not block.
        let handle = open_nonblocking(&fifo).unwrap();
        assert_eq!(
            ensure_regular(&handle.metadata().unwrap()).unwrap_err(),
            CoreError::NotRegularFile { kind: "fifo" }
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn directories_devices_and_regular_files() {
        let dir = temp_dir("kinds");
        assert_eq!(
            open_regular_file(&dir).unwrap_err(),
            CoreError::NotRegularFile { kind: "directory" }
        );
        assert_eq!(
            open_regular_file(Path::new("/dev/null")).unwrap_err(),
            CoreError::NotRegularFile {
                kind: "character_device"
            }
        );
        assert_eq!(
            open_regular_file(&dir.join("missing")).unwrap_err().code(),
            "io_error"
        );
        let file = dir.join("f.zip");
        std::fs::write(&file, b"content").unwrap();
        let mut read = String::new();
        open_regular_file(&file)
            .unwrap()
            .read_to_string(&mut read)
            .unwrap();
        assert_eq!(read, "content");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
