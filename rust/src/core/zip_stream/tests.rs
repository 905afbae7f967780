use std::io::Write;

use flate2::write::DeflateEncoder;
use flate2::Compression;
use sha2::{Digest, Sha256};

use super::directory::multi_disk;
use super::*;

// --- a tiny ZIP writer that can lie on purpose ---------------------------

#[derive(Clone, Default)]
struct Spec {
    name: Vec<u8>,
    data: Vec<u8>,
    method: u16,
    flags: u16,
    zip64: bool,
    descriptor: bool,
    descriptor_sig: bool,
    version_made_by: u16,
    external_attrs: u32,
    /// Replaces the compressed bytes.
    payload: Option<Vec<u8>>,
    crc: Option<u32>,
    size: Option<u64>,
    compressed: Option<u64>,
    offset: Option<u64>,
    local_sig: Option<u32>,
    local_name: Option<Vec<u8>>,
    local_method: Option<u16>,
    local_flags: Option<u16>,
    local_crc: Option<u32>,
    local_size: Option<u64>,
    local_compressed: Option<u64>,
    descriptor_crc: Option<u32>,
    descriptor_size: Option<u64>,
}

fn file(name: &str, data: &[u8], method: u16) -> Spec {
    Spec {
        name: name.as_bytes().to_vec(),
        data: data.to_vec(),
        method,
        version_made_by: 0x031e,
        ..Spec::default()
    }
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut enc = DeflateEncoder::new(Vec::new(), Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

fn zip64_extra(values: &[u64]) -> Vec<u8> {
    let mut extra = Vec::new();
    extra.extend(1u16.to_le_bytes());
    extra.extend(((values.len() * 8) as u16).to_le_bytes());
    for v in values {
        extra.extend(v.to_le_bytes());
    }
    extra
}

fn build(specs: &[Spec], zip64_end: bool, comment: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for s in specs {
        let payload = s.payload.clone().unwrap_or_else(|| {
            if s.method == METHOD_DEFLATE {
                deflate(&s.data)
            } else {
                s.data.clone()
            }
        });
        let crc = s.crc.unwrap_or_else(|| crc32fast::hash(&s.data));
        let size = s.size.unwrap_or(s.data.len() as u64);
        let comp = s.compressed.unwrap_or(payload.len() as u64);
        let offset = s.offset.unwrap_or(out.len() as u64);
        let flags = s.flags | if s.descriptor { FLAG_DESCRIPTOR } else { 0 };

        let (mut l_crc, mut l_size, mut l_comp) = if s.descriptor {
            (0, 0, 0)
        } else {
            (crc, size, comp)
        };
        l_crc = s.local_crc.unwrap_or(l_crc);
        l_size = s.local_size.unwrap_or(l_size);
        l_comp = s.local_compressed.unwrap_or(l_comp);
        let (l_extra, l_size32, l_comp32) = if s.zip64 {
            (zip64_extra(&[l_size, l_comp]), u32::MAX, u32::MAX)
        } else {
            (Vec::new(), l_size as u32, l_comp as u32)
        };
        let l_name = s.local_name.clone().unwrap_or_else(|| s.name.clone());
        out.extend(s.local_sig.unwrap_or(SIG_LOCAL).to_le_bytes());
        out.extend(45u16.to_le_bytes());
        out.extend(s.local_flags.unwrap_or(flags).to_le_bytes());
        out.extend(s.local_method.unwrap_or(s.method).to_le_bytes());
        out.extend([0u8; 4]);
        out.extend(l_crc.to_le_bytes());
        out.extend(l_comp32.to_le_bytes());
        out.extend(l_size32.to_le_bytes());
        out.extend((l_name.len() as u16).to_le_bytes());
        out.extend((l_extra.len() as u16).to_le_bytes());
        out.extend(&l_name);
        out.extend(&l_extra);
        out.extend(&payload);
        if s.descriptor {
            if s.descriptor_sig {
                out.extend(SIG_DESCRIPTOR.to_le_bytes());
            }
            out.extend(s.descriptor_crc.unwrap_or(crc).to_le_bytes());
            let d_size = s.descriptor_size.unwrap_or(size);
            if s.zip64 {
                out.extend(comp.to_le_bytes());
                out.extend(d_size.to_le_bytes());
            } else {
                out.extend((comp as u32).to_le_bytes());
                out.extend((d_size as u32).to_le_bytes());
            }
        }

        let (c_extra, c_size32, c_comp32, c_off32) = if s.zip64 {
            (
                zip64_extra(&[size, comp, offset]),
                u32::MAX,
                u32::MAX,
                u32::MAX,
            )
        } else {
            (Vec::new(), size as u32, comp as u32, offset as u32)
        };
        central.extend(SIG_CENTRAL.to_le_bytes());
        central.extend(s.version_made_by.to_le_bytes());
        central.extend(45u16.to_le_bytes());
        central.extend(flags.to_le_bytes());
        central.extend(s.method.to_le_bytes());
        central.extend([0u8; 4]);
        central.extend(crc.to_le_bytes());
        central.extend(c_comp32.to_le_bytes());
        central.extend(c_size32.to_le_bytes());
        central.extend((s.name.len() as u16).to_le_bytes());
        central.extend((c_extra.len() as u16).to_le_bytes());
        central.extend(0u16.to_le_bytes());
        central.extend(0u16.to_le_bytes());
        central.extend(0u16.to_le_bytes());
        central.extend(s.external_attrs.to_le_bytes());
        central.extend(c_off32.to_le_bytes());
        central.extend(&s.name);
        central.extend(&c_extra);
    }
    let cd_offset = out.len() as u64;
    let cd_size = central.len() as u64;
    out.extend(&central);
    let n = specs.len() as u64;
    if zip64_end {
        let eocd64_pos = out.len() as u64;
        out.extend(SIG_EOCD64.to_le_bytes());
        out.extend(44u64.to_le_bytes());
        out.extend(45u16.to_le_bytes());
        out.extend(45u16.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend(n.to_le_bytes());
        out.extend(n.to_le_bytes());
        out.extend(cd_size.to_le_bytes());
        out.extend(cd_offset.to_le_bytes());
        out.extend(SIG_EOCD64_LOCATOR.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend(eocd64_pos.to_le_bytes());
        out.extend(1u32.to_le_bytes());
    }
    out.extend(SIG_EOCD.to_le_bytes());
    out.extend([0u8; 4]);
    let (n16, size32, off32) = if zip64_end {
        (u16::MAX, u32::MAX, u32::MAX)
    } else {
        (n as u16, cd_size as u32, cd_offset as u32)
    };
    out.extend(n16.to_le_bytes());
    out.extend(n16.to_le_bytes());
    out.extend(size32.to_le_bytes());
    out.extend(off32.to_le_bytes());
    out.extend((comment.len() as u16).to_le_bytes());
    out.extend(comment);
    out
}

fn zip(specs: &[Spec]) -> Vec<u8> {
    build(specs, false, b"")
}

fn expect(data: &[u8]) -> Expected {
    Expected {
        sha256: Sha256::digest(data).into(),
        size: data.len() as u64,
    }
}

fn text(len: usize) -> Vec<u8> {
    let line = b"The quick brown fox jumps over the lazy dog 0123456789\n";
    line.iter().copied().cycle().take(len).collect()
}

fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect()
}

fn read(bytes: Vec<u8>, name: &str, data: &[u8]) -> CoreResult<Vec<u8>> {
    ZipArchive::open(bytes)?.read_member(name, &expect(data), u64::MAX)
}

fn roundtrip(spec: Spec, zip64_end: bool) {
    let data = spec.data.clone();
    let name = String::from_utf8(spec.name.clone()).unwrap();
    let archive = ZipArchive::open(build(&[spec], zip64_end, b"a comment")).unwrap();
    let ex = expect(&data);
    assert_eq!(archive.read_member(&name, &ex, u64::MAX).unwrap(), data);
    archive
        .verify_member(&name, &ex, data.len() as u64)
        .unwrap();
    let mut buf = vec![0u8; data.len()];
    archive
        .read_member_to_slice(&name, &ex, u64::MAX, &mut buf)
        .unwrap();
    assert_eq!(buf, data);
    let mut reused = b"stale".to_vec();
    archive
        .read_member_into(&name, &ex, u64::MAX, &mut reused)
        .unwrap();
    assert_eq!(reused, data);
}

fn err_of(bytes: Vec<u8>, name: &str, ex: &Expected, max: u64) -> CoreError {
    match ZipArchive::open(bytes) {
        Err(e) => e,
        Ok(a) => {
            let via_verify = a.verify_member(name, ex, max).unwrap_err();
            let via_read = a.read_member(name, ex, max).unwrap_err();
            assert_eq!(via_verify, via_read);
            via_read
        }
    }
}

// --- happy paths ------------------------------------------------------------

#[test]
fn stored_and_deflate_roundtrip() {
    for method in [METHOD_STORED, METHOD_DEFLATE] {
        for data in [Vec::new(), b"x".to_vec(), text(1 << 20), noise(700_000, 7)] {
            roundtrip(file("dir/member.txt", &data, method), false);
        }
    }
}

#[test]
fn zip64_entries_and_end_record() {
    for method in [METHOD_STORED, METHOD_DEFLATE] {
        let spec = Spec {
            zip64: true,
            ..file("big.bin", &text(300_000), method)
        };
        roundtrip(spec.clone(), true);
        roundtrip(spec, false);
        roundtrip(file("plain.bin", &text(1000), method), true);
    }
    let archive = ZipArchive::open(build(
        &[Spec {
            zip64: true,
            ..file("a", b"abc", 0)
        }],
        true,
        b"",
    ))
    .unwrap();
    assert!(archive.entries()[0].zip64);
}

#[test]
fn data_descriptors() {
    for (sig, zip64) in [(false, false), (true, false), (true, true), (false, true)] {
        for method in [METHOD_STORED, METHOD_DEFLATE] {
            let spec = Spec {
                descriptor: true,
                descriptor_sig: sig,
                zip64,
                ..file("d", &text(5000), method)
            };
            roundtrip(spec, false);
        }
    }
    // A signature-less descriptor whose CRC happens to equal the signature.
    let data = b"crc".to_vec();
    let spec = Spec {
        descriptor: true,
        crc: Some(SIG_DESCRIPTOR),
        ..file("d", &data, 0)
    };
    let err = read(zip(std::slice::from_ref(&spec)), "d", &data).unwrap_err();
    assert_eq!(err, CoreError::CrcMismatch); // descriptor parsed fine, CRC is simply wrong
}

#[test]
fn entries_report_sizes_and_kinds() {
    let archive = ZipArchive::open(zip(&[
        file("a.txt", &text(100), METHOD_DEFLATE),
        Spec {
            external_attrs: 0o120_777 << 16,
            ..file("link", b"target", 0)
        },
        file("dir/", b"", 0),
    ]))
    .unwrap();
    let e = archive.entries();
    assert_eq!(e.len(), 3);
    assert_eq!(
        (e[0].kind, e[0].size, e[0].crc32),
        (EntryKind::File, 100, crc32fast::hash(&text(100)))
    );
    assert_eq!(e[0].method, METHOD_DEFLATE);
    assert_eq!(e[1].kind, EntryKind::Symlink);
    assert_eq!(e[2].kind, EntryKind::Directory);
}

// --- classification -----------------------------------------------------------

#[test]
fn classification_and_precedence() {
    let symlink_attrs = 0o120_777 << 16;
    let cases: Vec<(Spec, EntryKind)> = vec![
        (file("ok.txt", b"1", 0), EntryKind::File),
        (file("d/", b"", 0), EntryKind::Directory),
        (
            Spec {
                external_attrs: symlink_attrs,
                ..file("l", b"x", 0)
            },
            EntryKind::Symlink,
        ),
        // Symlink mode on a non-Unix host is a plain file.
        (
            Spec {
                external_attrs: symlink_attrs,
                version_made_by: 0x0014,
                ..file("w", b"x", 0)
            },
            EntryKind::File,
        ),
        (
            Spec {
                external_attrs: symlink_attrs,
                ..file("ld/", b"", 0)
            },
            EntryKind::Symlink,
        ),
        (
            Spec {
                name: b"\xff\xfe.txt".to_vec(),
                ..file("", b"1", 0)
            },
            EntryKind::BadName,
        ),
        (
            Spec {
                name: b"../\xff".to_vec(),
                ..file("", b"1", 0)
            },
            EntryKind::BadName,
        ),
        (file("a\0b", b"1", 0), EntryKind::BadName),
        (file("", b"1", 0), EntryKind::BadName),
        (file("../x", b"1", 0), EntryKind::UnsafePath),
        (file("a/../../x", b"1", 0), EntryKind::UnsafePath),
        (file("/etc/passwd", b"1", 0), EntryKind::UnsafePath),
        (file("\\x", b"1", 0), EntryKind::UnsafePath),
        (file("C:\\x", b"1", 0), EntryKind::UnsafePath),
        (file("c:x", b"1", 0), EntryKind::UnsafePath),
        (file("a\\..\\..\\x", b"1", 0), EntryKind::UnsafePath),
        (file("a/..", b"1", 0), EntryKind::UnsafePath),
        (
            Spec {
                external_attrs: symlink_attrs,
                ..file("../l", b"x", 0)
            },
            EntryKind::UnsafePath,
        ),
        (file("a..b/..c", b"1", 0), EntryKind::File),
    ];
    for (spec, kind) in cases {
        let name = String::from_utf8_lossy(&spec.name).into_owned();
        let archive = ZipArchive::open(zip(std::slice::from_ref(&spec))).unwrap();
        assert_eq!(archive.entries()[0].kind, kind, "{name:?}");
        if kind != EntryKind::File {
            let err = archive
                .read_member(&name, &expect(&spec.data), u64::MAX)
                .unwrap_err();
            assert_eq!(
                err,
                CoreError::ZipMemberUnsafe {
                    reason: kind.as_str()
                },
                "{name:?}"
            );
        }
    }
}

#[test]
fn duplicates_are_all_unreadable() {
    let bytes = zip(&[
        file("same", b"one", 0),
        file("other", b"2", 0),
        file("same", b"two", 8),
    ]);
    let archive = ZipArchive::open(bytes).unwrap();
    let kinds: Vec<_> = archive.entries().iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [EntryKind::Duplicate, EntryKind::File, EntryKind::Duplicate]
    );
    let err = archive
        .read_member("same", &expect(b"one"), 100)
        .unwrap_err();
    assert_eq!(
        err,
        CoreError::ZipMemberUnsafe {
            reason: "duplicate"
        }
    );
    // Duplicated unsafe names stay unsafe_path (precedence).
    let archive = ZipArchive::open(zip(&[file("../x", b"1", 0), file("../x", b"2", 0)])).unwrap();
    assert!(archive
        .entries()
        .iter()
        .all(|e| e.kind == EntryKind::UnsafePath));
}

#[test]
fn lookup_is_exact() {
    let archive = ZipArchive::open(zip(&[file("Dir/A.txt", b"1", 0)])).unwrap();
    for name in ["dir/a.txt", "Dir/A.txt ", "Dir\\A.txt", "Dir/A.tx", ""] {
        assert_eq!(
            archive.read_member(name, &expect(b"1"), 10).unwrap_err(),
            CoreError::ZipMemberNotFound
        );
    }
    assert_eq!(
        archive.read_member("Dir/A.txt", &expect(b"1"), 10).unwrap(),
        b"1"
    );
}

// --- member errors ---------------------------------------------------------------

#[test]
fn encrypted_and_unsupported_methods() {
    let spec = Spec {
        flags: FLAG_ENCRYPTED,
        ..file("e", b"secret", 0)
    };
    assert_eq!(
        read(zip(&[spec]), "e", b"secret").unwrap_err(),
        CoreError::ZipEncrypted
    );
    for method in [12u16, 14, 93, 99] {
        let spec = Spec {
            payload: Some(b"xx".to_vec()),
            ..file("m", b"data", method)
        };
        assert_eq!(
            read(zip(&[spec]), "m", b"data").unwrap_err(),
            CoreError::ZipUnsupportedMethod { method }
        );
    }
    // Encryption is reported before the method.
    let spec = Spec {
        flags: FLAG_ENCRYPTED,
        payload: Some(b"xx".to_vec()),
        ..file("e", b"data", 99)
    };
    assert_eq!(
        read(zip(&[spec]), "e", b"data").unwrap_err(),
        CoreError::ZipEncrypted
    );
}

#[test]
fn early_size_and_limit_checks() {
    let data = text(1000);
    let bytes = zip(&[file("t", &data, 8)]);
    let mut ex = expect(&data);
    ex.size = 999;
    assert_eq!(
        err_of(bytes.clone(), "t", &ex, u64::MAX),
        CoreError::SizeMismatch {
            expected: 999,
            actual: 1000
        }
    );
    assert_eq!(
        err_of(bytes.clone(), "t", &expect(&data), 999),
        CoreError::ByteLimitExceeded { limit: 999 }
    );
    let archive = ZipArchive::open(bytes).unwrap();
    archive.verify_member("t", &expect(&data), 1000).unwrap();
    archive.check_member("t", &expect(&data), 1000).unwrap();
    let mut small = vec![0u8; 10];
    assert!(matches!(
        archive.read_member_to_slice("t", &expect(&data), 1000, &mut small),
        Err(CoreError::InvalidArgument { .. })
    ));
}

#[test]
fn zip_bomb_with_lying_sizes_stops_at_the_limit() {
    let zeros = vec![0u8; 8 << 20];
    let payload = deflate(&zeros);
    let claimed = b"0123456789".repeat(10);
    // The central directory (and the local header) claim 100 bytes.
    let spec = Spec {
        payload: Some(payload.clone()),
        ..file("bomb", &claimed, 8)
    };
    let bytes = zip(&[spec]);
    let err = err_of(bytes.clone(), "bomb", &expect(&claimed), u64::MAX);
    assert_eq!(
        err,
        CoreError::SizeMismatch {
            expected: 100,
            actual: 101
        }
    );
    let err = err_of(bytes, "bomb", &expect(&claimed), 100);
    assert_eq!(err, CoreError::ByteLimitExceeded { limit: 100 });
    // Honest sizes: rejected before inflating.
    let honest = Spec {
        payload: Some(payload),
        ..file("bomb", &zeros, 8)
    };
    let err = err_of(zip(&[honest]), "bomb", &expect(&zeros), 1 << 20);
    assert_eq!(err, CoreError::ByteLimitExceeded { limit: 1 << 20 });
}

#[test]
fn short_stream_is_a_size_mismatch() {
    let data = text(5000);
    let spec = Spec {
        payload: Some(deflate(&data[..4000])),
        crc: Some(crc32fast::hash(&data)),
        ..file("s", &data, 8)
    };
    let err = read(zip(&[spec]), "s", &data).unwrap_err();
    assert_eq!(
        err,
        CoreError::SizeMismatch {
            expected: 5000,
            actual: 4000
        }
    );
}

#[test]
fn crc_and_hash_mismatch() {
    let data = text(3000);
    for method in [0, 8] {
        let spec = Spec {
            crc: Some(crc32fast::hash(&data) ^ 1),
            ..file("c", &data, method)
        };
        assert_eq!(
            read(zip(&[spec]), "c", &data).unwrap_err(),
            CoreError::CrcMismatch
        );
        let mut ex = expect(&data);
        ex.sha256[0] ^= 1;
        assert_eq!(
            err_of(zip(&[file("c", &data, method)]), "c", &ex, u64::MAX),
            CoreError::HashMismatch
        );
    }
}

#[test]
fn broken_deflate_streams() {
    let data = text(100_000);
    let full = deflate(&data);
    let cut = Spec {
        payload: Some(full[..full.len() / 2].to_vec()),
        ..file("t", &data, 8)
    };
    assert_eq!(
        read(zip(&[cut]), "t", &data).unwrap_err(),
        CoreError::ZipTruncated {
            what: "deflate stream ends before its end marker"
        }
    );
    let mut padded = full.clone();
    padded.extend(b"trailing");
    let spec = Spec {
        payload: Some(padded),
        ..file("t", &data, 8)
    };
    assert_eq!(
        read(zip(&[spec]), "t", &data).unwrap_err(),
        CoreError::ZipCorrupt {
            what: "data after the end of the deflate stream"
        }
    );
    let spec = Spec {
        payload: Some(vec![0xff; 64]),
        ..file("t", &data, 8)
    };
    assert!(matches!(
        read(zip(&[spec]), "t", &data).unwrap_err(),
        CoreError::ZipCorrupt { .. }
    ));
    let spec = Spec {
        payload: Some(Vec::new()),
        ..file("t", &data, 8)
    };
    assert!(matches!(
        read(zip(&[spec]), "t", &data).unwrap_err(),
        CoreError::ZipTruncated { .. }
    ));
    let spec = Spec {
        payload: Some(b"abc".to_vec()),
        ..file("t", b"abcd", 0)
    };
    assert!(matches!(
        read(zip(&[spec]), "t", b"abcd").unwrap_err(),
        CoreError::ZipCorrupt { .. }
    ));
}

#[test]
fn local_header_mismatches() {
    let data = text(2000);
    let base = file("name.txt", &data, 8);
    let cases: Vec<(Spec, &str)> = vec![
        (
            Spec {
                local_sig: Some(0x1234_5678),
                ..base.clone()
            },
            "signature",
        ),
        (
            Spec {
                local_name: Some(b"other.txt".to_vec()),
                ..base.clone()
            },
            "name",
        ),
        (
            Spec {
                local_name: Some(b"NAME.txt".to_vec()),
                ..base.clone()
            },
            "name",
        ),
        (
            Spec {
                local_flags: Some(FLAG_ENCRYPTED),
                ..base.clone()
            },
            "encrypted",
        ),
        (
            Spec {
                local_flags: Some(FLAG_DESCRIPTOR),
                ..base.clone()
            },
            "data_descriptor",
        ),
        (
            Spec {
                local_method: Some(0),
                ..base.clone()
            },
            "method",
        ),
        (
            Spec {
                local_crc: Some(1),
                ..base.clone()
            },
            "crc32",
        ),
        (
            Spec {
                local_size: Some(1999),
                ..base.clone()
            },
            "size",
        ),
        (
            Spec {
                local_compressed: Some(7),
                ..base.clone()
            },
            "compressed_size",
        ),
        (
            Spec {
                local_size: Some(1),
                zip64: true,
                ..base.clone()
            },
            "size",
        ),
        (
            Spec {
                local_compressed: Some(1),
                zip64: true,
                ..base.clone()
            },
            "compressed_size",
        ),
        (
            Spec {
                descriptor: true,
                descriptor_crc: Some(5),
                ..base.clone()
            },
            "descriptor_crc32",
        ),
        (
            Spec {
                descriptor: true,
                descriptor_sig: true,
                descriptor_size: Some(5),
                ..base.clone()
            },
            "descriptor_size",
        ),
        (
            Spec {
                descriptor: true,
                zip64: true,
                descriptor_size: Some(5),
                ..base.clone()
            },
            "descriptor_size",
        ),
    ];
    for (spec, field) in cases {
        assert_eq!(
            read(zip(&[spec]), "name.txt", &data).unwrap_err(),
            CoreError::ZipHeaderMismatch { field },
            "{field}"
        );
    }
    // With a data descriptor, the local CRC and sizes are not compared.
    let spec = Spec {
        descriptor: true,
        local_crc: Some(9),
        local_size: Some(9),
        ..base
    };
    assert_eq!(read(zip(&[spec]), "name.txt", &data).unwrap(), data);
}

// --- archive structure ---------------------------------------------------------------

#[test]
fn overlapping_entries_are_corrupt() {
    let a = file("a", &text(1000), 0);
    let same_offset = Spec {
        offset: Some(0),
        ..file("b", &text(1000), 0)
    };
    let err = ZipArchive::open(zip(&[a.clone(), same_offset])).unwrap_err();
    assert_eq!(
        err,
        CoreError::ZipCorrupt {
            what: "member data overlaps another entry"
        }
    );
    // b's data claims to run past c's local header.
    let b = Spec {
        compressed: Some(2000),
        size: Some(2000),
        ..file("b", &text(1000), 0)
    };
    let err = ZipArchive::open(zip(&[b, file("c", b"c", 0)])).unwrap_err();
    assert_eq!(
        err,
        CoreError::ZipCorrupt {
            what: "member data overlaps another entry"
        }
    );
    let last = Spec {
        compressed: Some(2000),
        size: Some(2000),
        ..file("b", &text(1000), 0)
    };
    let err = ZipArchive::open(zip(&[last])).unwrap_err();
    assert_eq!(
        err,
        CoreError::ZipCorrupt {
            what: "member data overlaps the central directory"
        }
    );
    let far = Spec {
        offset: Some(1 << 40),
        zip64: true,
        ..file("f", b"x", 0)
    };
    assert!(matches!(
        ZipArchive::open(zip(&[far])).unwrap_err(),
        CoreError::ZipCorrupt { .. }
    ));
}

#[test]
fn multi_disk_is_corrupt() {
    let mut bytes = zip(&[file("a", b"1", 0)]);
    let eocd = bytes.len() - EOCD_LEN;
    bytes[eocd + 4] = 1;
    assert_eq!(ZipArchive::open(bytes).unwrap_err(), multi_disk());
    let mut bytes = build(&[file("a", b"1", 0)], true, b"");
    let locator = bytes.len() - EOCD_LEN - LOCATOR_LEN;
    bytes[locator + 16] = 3;
    assert_eq!(ZipArchive::open(bytes).unwrap_err(), multi_disk());
}

#[test]
fn end_record_search_and_bounds() {
    let comment = vec![b'#'; MAX_COMMENT_LEN];
    let archive = ZipArchive::open(build(&[file("a", b"1", 0)], false, &comment)).unwrap();
    assert_eq!(archive.entries().len(), 1);
    let mut trailing = zip(&[file("a", b"1", 0)]);
    trailing.extend(b"junk");
    assert!(matches!(
        ZipArchive::open(trailing).unwrap_err(),
        CoreError::ZipCorrupt { .. }
    ));
    let empty = zip(&[]);
    assert!(ZipArchive::open(empty).unwrap().entries().is_empty());
    for junk in [Vec::new(), vec![0u8; 10], b"PK\x05\x06".to_vec()] {
        assert!(matches!(
            ZipArchive::open(junk).unwrap_err(),
            CoreError::ZipCorrupt { .. }
        ));
    }
    // Entry count larger than the directory.
    let mut bytes = zip(&[file("a", b"1", 0)]);
    let eocd = bytes.len() - EOCD_LEN;
    bytes[eocd + 8] = 2;
    bytes[eocd + 10] = 2;
    assert!(matches!(
        ZipArchive::open(bytes).unwrap_err(),
        CoreError::ZipCorrupt { .. }
    ));
}

/// Every prefix and a batch of random corruptions: typed errors, no panic.
#[test]
fn truncation_and_corruption_never_panic() {
    let specs = [
        file("a.txt", &text(3000), 8),
        Spec {
            zip64: true,
            descriptor: true,
            descriptor_sig: true,
            ..file("b", &noise(500, 3), 8)
        },
        file("c", b"stored", 0),
    ];
    let bytes = build(&specs, true, b"c");
    let names = ["a.txt", "b", "c"];
    let exercise = |candidate: Vec<u8>| {
        if let Ok(archive) = ZipArchive::open(candidate) {
            for (name, spec) in names.iter().zip(&specs) {
                let _ = archive.read_member(name, &expect(&spec.data), 1 << 20);
            }
        }
    };
    for cut in 0..bytes.len() {
        assert!(ZipArchive::open(bytes[..cut].to_vec()).is_err());
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..3000 {
        let mut candidate = bytes.clone();
        for _ in 0..4 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed % candidate.len() as u64) as usize;
            candidate[at] = (seed >> 32) as u8;
        }
        exercise(candidate);
    }
}

#[test]
fn sha256_hex_parsing() {
    let hex = "E3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    assert_eq!(
        parse_sha256_hex(hex).unwrap(),
        <[u8; 32]>::from(Sha256::digest(b""))
    );
    for bad in [
        "",
        "e3b0",
        &hex[1..],
        &format!("{hex}0"),
        &hex.replace('E', "g"),
        &hex.replacen('E', "é", 1)[..64],
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85 ",
    ] {
        assert!(
            matches!(
                parse_sha256_hex(bad),
                Err(CoreError::InvalidArgument { .. })
            ),
            "{bad:?}"
        );
    }
}

#[test]
fn file_reader_works() {
    let path = std::env::temp_dir().join(format!("zip_stream_test_{}.zip", std::process::id()));
    std::fs::write(&path, zip(&[file("a", &text(70_000), 8)])).unwrap();
    let archive = ZipArchive::open(File::open(&path).unwrap());
    std::fs::remove_file(&path).unwrap();
    archive
        .unwrap()
        .verify_member("a", &expect(&text(70_000)), u64::MAX)
        .unwrap();
}
