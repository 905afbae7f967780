//! Object-level reads: IDs, headers, blob bytes, deadlines. A leaf: it
//! uses no other module of `git`.

use std::time::{Duration, Instant};

use gix_hash::ObjectId;
use gix_object::{Find, FindHeader};

use crate::core::error::{CoreError, CoreResult};

/// One thread's handle on the object database, with its own delta-base cache.
pub type Objects = gix_odb::HandleArc;

pub fn parse_oid(hex: &str) -> CoreResult<ObjectId> {
    let invalid = CoreError::GitRequestInvalid {
        what: "object ID must be 40 hexadecimal digits",
    };
    if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid);
    }
    ObjectId::from_hex(hex.as_bytes()).map_err(|_| invalid)
}

/// The deadline of a read that may take `timeout_s` seconds.
pub fn deadline_after(timeout_s: f64) -> CoreResult<Option<Instant>> {
    if timeout_s.is_nan() || timeout_s < 0.0 {
        return Err(CoreError::GitRequestInvalid {
            what: "timeout_s must be a non-negative number",
        });
    }
    // Anything beyond a day is "no deadline" (and keeps Duration in range).
    if timeout_s > 86_400.0 {
        return Ok(None);
    }
    Ok(Some(Instant::now() + Duration::from_secs_f64(timeout_s)))
}

pub(super) fn check_deadline(deadline: Option<Instant>) -> CoreResult<()> {
    match deadline {
        Some(at) if Instant::now() >= at => Err(CoreError::GitTimeout),
        _ => Ok(()),
    }
}

/// Checks that `oid` names a commit of the repository (from its header:
/// nothing is inflated), with the errors of a full commit read.
pub(super) fn commit_header(repo: &Objects, oid: &ObjectId) -> CoreResult<()> {
    let header = repo
        .try_header(oid)
        .map_err(|_| unreadable("cannot read the commit object"))?;
    match header {
        None => Err(CoreError::GitCommitMissing { found: "nothing" }),
        Some(h) if h.kind != gix_object::Kind::Commit => Err(CoreError::GitCommitMissing {
            found: kind_name(h.kind),
        }),
        Some(_) => Ok(()),
    }
}

/// The blob's size from its header, or `None` when the object database does
/// not hold it (a partial clone leaves blobs out until they are fetched). An
/// object that is there but cannot be read, or is no blob, is an error.
pub(super) fn header_size(repo: &Objects, oid: &ObjectId) -> CoreResult<Option<u64>> {
    let Some(header) = repo
        .try_header(oid)
        .map_err(|_| unreadable("cannot read an object header"))?
    else {
        return Ok(None);
    };
    if header.kind != gix_object::Kind::Blob {
        return Err(unreadable("a tree entry names an object that is no blob"));
    }
    Ok(Some(header.size))
}

/// The blob's bytes in a buffer of their own.
#[cfg(test)]
pub(super) fn read_blob(repo: &Objects, oid: &ObjectId) -> CoreResult<Vec<u8>> {
    let mut buf = Vec::new();
    let len = read_blob_into(repo, oid, &mut buf)?
        .ok_or(unreadable("a blob of the commit is missing"))?
        .len();
    buf.truncate(len);
    Ok(buf)
}

/// The blob's bytes, inflated into `buf` (a reused scratch buffer), or
/// `None` when the object database does not hold it (as [`header_size`]).
pub(super) fn read_blob_into<'b>(
    repo: &Objects,
    oid: &ObjectId,
    buf: &'b mut Vec<u8>,
) -> CoreResult<Option<&'b [u8]>> {
    let found = repo
        .try_find(oid, buf)
        .map_err(|_| unreadable("a blob is corrupt"))?;
    match found {
        None => Ok(None),
        Some(data) if data.kind != gix_object::Kind::Blob => {
            Err(unreadable("a tree entry names an object that is no blob"))
        }
        Some(data) => Ok(Some(data.data)),
    }
}

pub(super) fn unreadable(what: &'static str) -> CoreError {
    CoreError::GitRepositoryUnavailable { what }
}

pub(super) fn kind_name(kind: gix_object::Kind) -> &'static str {
    match kind {
        gix_object::Kind::Blob => "blob",
        gix_object::Kind::Tree => "tree",
        gix_object::Kind::Commit => "commit",
        gix_object::Kind::Tag => "tag",
    }
}
