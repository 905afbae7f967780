//! Inflating a planned member: stored or deflate data, produced in output
//! windows into a [`Sink`], with CRC-32 and SHA-256 computed window by window
//! and checked at the end.

use flate2::{Decompress, FlushDecompress, Status};
use sha2::{Digest, Sha256};

use crate::core::error::{CoreError, CoreResult};

use super::member::MemberPlan;
use super::{ReadAt, ZipArchive, METHOD_STORED};

cpufeatures::new!(cpuid_sha, "sha", "sse2", "ssse3", "sse4.1");

/// The sha2 crate picks SHA-NI at run time through the same detection.
pub fn sha256_implementation() -> &'static str {
    if cpuid_sha::get() {
        "sha-ni"
    } else {
        "software"
    }
}

/// Compressed bytes are read in chunks of this size.
const INPUT_CHUNK: usize = 256 * 1024;
/// Output is produced, hashed and CRC'd in windows of this size, so each
/// window is still in cache when it is hashed.
pub(super) const OUTPUT_WINDOW: usize = 256 * 1024;

/// Where inflated bytes go: into the caller's buffer or into a reused
/// window that is only hashed.
pub(super) enum Sink<'a> {
    Keep(&'a mut [u8]),
    /// Appends to a Vec with `limit` bytes reserved: the decoder writes into
    /// spare capacity, so the output is never zero-filled first.
    Append(&'a mut Vec<u8>),
    Discard(Vec<u8>),
}

impl Sink<'_> {
    fn window(&mut self, pos: usize, room: usize) -> CoreResult<&mut [u8]> {
        let window = match self {
            Sink::Keep(buf) => pos.checked_add(room).and_then(|end| buf.get_mut(pos..end)),
            Sink::Discard(scratch) => scratch.get_mut(..room),
            Sink::Append(_) => None,
        };
        window.ok_or(CoreError::InvalidArgument {
            what: "output buffer is smaller than the member",
        })
    }
}

struct Digests {
    crc: crc32fast::Hasher,
    sha: Sha256,
}

impl Digests {
    fn new() -> Self {
        Digests {
            crc: crc32fast::Hasher::new(),
            sha: Sha256::new(),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        self.crc.update(bytes);
        self.sha.update(bytes);
    }
}

impl<R: ReadAt> ZipArchive<R> {
    /// Steps 9 and 10 of reading (see the module doc of `zip_stream`).
    pub(super) fn inflate(&self, plan: &MemberPlan, mut sink: Sink<'_>) -> CoreResult<()> {
        let mut digests = Digests::new();
        let produced = match plan.method {
            METHOD_STORED => self.copy_stored(plan, &mut sink, &mut digests)?,
            _ => self.inflate_deflate(plan, &mut sink, &mut digests)?,
        };
        if produced != plan.expected.size {
            return Err(CoreError::SizeMismatch {
                expected: plan.expected.size,
                actual: produced,
            });
        }
        if digests.crc.finalize() != plan.crc32 {
            return Err(CoreError::CrcMismatch);
        }
        if digests.sha.finalize().as_slice() != plan.expected.sha256 {
            return Err(CoreError::HashMismatch);
        }
        Ok(())
    }

    fn copy_stored(
        &self,
        plan: &MemberPlan,
        sink: &mut Sink<'_>,
        digests: &mut Digests,
    ) -> CoreResult<u64> {
        // prepare() made sure compressed size == size == limit.
        let mut pos: u64 = 0;
        while pos < plan.limit {
            let room =
                usize::try_from(plan.limit - pos).map_or(OUTPUT_WINDOW, |r| r.min(OUTPUT_WINDOW));
            let at = usize::try_from(pos).map_err(|_| too_large())?;
            let window = sink.window(at, room)?;
            let offset = plan.data_start.checked_add(pos).ok_or_else(too_large)?;
            self.reader.read_exact_at(window, offset)?;
            digests.update(window);
            pos += room as u64;
        }
        Ok(pos)
    }

    fn inflate_deflate(
        &self,
        plan: &MemberPlan,
        sink: &mut Sink<'_>,
        digests: &mut Digests,
    ) -> CoreResult<u64> {
        let limit = usize::try_from(plan.limit).map_err(|_| too_large())?;
        let chunk =
            usize::try_from(plan.compressed_size).map_or(INPUT_CHUNK, |c| c.min(INPUT_CHUNK));
        let mut input = vec![0u8; chunk];
        let (mut start, mut end) = (0usize, 0usize);
        let mut next_in = plan.data_start;
        let mut left_in = plan.compressed_size;
        let mut decoder = Decompress::new(false);
        // Once the limit is reached, one more byte of room tells whether
        // the stream would produce more.
        let mut probe = [0u8; 1];
        let mut pos = 0usize;
        loop {
            if start == end && left_in > 0 {
                let n = usize::try_from(left_in).map_or(chunk, |l| l.min(chunk));
                self.reader.read_exact_at(&mut input[..n], next_in)?;
                next_in = next_in.checked_add(n as u64).ok_or_else(too_large)?;
                left_in -= n as u64;
                (start, end) = (0, n);
            }
            let room = (limit - pos).min(OUTPUT_WINDOW);
            let (in_before, out_before) = (decoder.total_in(), decoder.total_out());
            let corrupt = |_| CoreError::ZipCorrupt {
                what: "invalid deflate data",
            };
            let status = match sink {
                Sink::Append(out) if room > 0 => {
                    // Bounded by the capacity reserved for `limit` bytes.
                    let status = decoder
                        .decompress_vec(&input[start..end], out, FlushDecompress::None)
                        .map_err(corrupt)?;
                    if out.len() > limit {
                        return Err(over_limit(plan));
                    }
                    digests.update(&out[pos..]);
                    status
                }
                _ => {
                    let dest = if room > 0 {
                        sink.window(pos, room)?
                    } else {
                        &mut probe[..]
                    };
                    let status = decoder
                        .decompress(&input[start..end], dest, FlushDecompress::None)
                        .map_err(corrupt)?;
                    let produced =
                        usize::try_from(decoder.total_out() - out_before).unwrap_or(usize::MAX);
                    if room > 0 {
                        digests.update(dest.get(..produced).unwrap_or(dest));
                    }
                    status
                }
            };
            let consumed = usize::try_from(decoder.total_in() - in_before).unwrap_or(usize::MAX);
            let produced = usize::try_from(decoder.total_out() - out_before).unwrap_or(usize::MAX);
            start = start.saturating_add(consumed).min(end);
            if room == 0 {
                if produced > 0 {
                    return Err(over_limit(plan));
                }
            } else {
                pos += produced;
            }
            match status {
                Status::StreamEnd if start == end && left_in == 0 => return Ok(pos as u64),
                Status::StreamEnd => {
                    return Err(CoreError::ZipCorrupt {
                        what: "data after the end of the deflate stream",
                    })
                }
                Status::Ok | Status::BufError if consumed == 0 && produced == 0 => {
                    return Err(if start == end && left_in == 0 {
                        CoreError::ZipTruncated {
                            what: "deflate stream ends before its end marker",
                        }
                    } else {
                        CoreError::ZipCorrupt {
                            what: "deflate stream makes no progress",
                        }
                    });
                }
                Status::Ok | Status::BufError => {}
            }
        }
    }
}

fn too_large() -> CoreError {
    CoreError::ZipCorrupt {
        what: "offset or size out of range",
    }
}

/// The stream wants to write past `plan.limit`.
fn over_limit(plan: &MemberPlan) -> CoreError {
    if plan.limit == plan.max_bytes {
        CoreError::ByteLimitExceeded {
            limit: plan.max_bytes,
        }
    } else {
        CoreError::SizeMismatch {
            expected: plan.expected.size,
            actual: plan.limit.saturating_add(1),
        }
    }
}
