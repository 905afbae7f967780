use super::*;

/// A WDBC file of `format` whose records are `(id, value, name)` for the
/// format "nis" (the names go to the string block, offset 0 is "").
fn wdbc(rows: &[(u32, u32, &str)]) -> Vec<u8> {
    let mut strings = vec![0u8];
    let mut records = Vec::new();
    for (id, value, name) in rows {
        let offset = strings.len() as u32;
        strings.extend_from_slice(name.as_bytes());
        strings.push(0);
        for word in [*id, *value, offset] {
            records.extend_from_slice(&word.to_le_bytes());
        }
    }
    let mut out = Vec::new();
    for word in [WDBC, rows.len() as u32, 3, 12, strings.len() as u32] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend(records);
    out.extend(strings);
    out
}

fn set_u32(data: &mut [u8], offset: usize, value: u32) {
    data[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
}

#[test]
fn reads_records_by_id_and_name() {
    let table = ClientTable::parse(
        wdbc(&[(7, 1, "Fireball"), (3, 2, "Frost Nova"), (9, 3, "fireball")]),
        "nis",
    )
    .unwrap();
    assert_eq!(table.record_count(), 3);
    assert_eq!(
        table.find_ids(&[3, 4, 9]).unwrap(),
        vec![Some(1), None, Some(2)]
    );
    assert_eq!(
        table.record(1).unwrap(),
        vec![
            Value::UInt(3),
            Value::UInt(2),
            Value::Str("Frost Nova".into())
        ]
    );
    assert_eq!(table.find_string(2, "FIREBALL", 10).unwrap(), vec![0, 2]);
    assert_eq!(table.find_string(2, "FIREBALL", 1).unwrap(), vec![0]);
    assert_eq!(table.find_uint(1, &[2, 3], 10).unwrap(), vec![1, 2]);
}

#[test]
fn a_repeated_id_keeps_the_last_record_like_the_engine() {
    let table = ClientTable::parse(wdbc(&[(5, 1, "a"), (5, 2, "b")]), "nis").unwrap();
    assert_eq!(table.find_ids(&[5]).unwrap(), vec![Some(1)]);
}

#[test]
fn wdb2_skips_the_index_table_of_extended_headers() {
    let mut out = Vec::new();
    let strings = b"\0Hearthstone\0";
    // magic, records, fields, record size, strings, hash, build 15595,
    // timestamp, min 6948, max 6949, locale, copy table size.
    for word in [
        WDB2,
        1,
        2,
        8,
        strings.len() as u32,
        0xABCD,
        15595,
        0,
        6948,
        6949,
        1,
        0,
    ] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend(std::iter::repeat_n(0xEE, 2 * 6));
    out.extend_from_slice(&6948u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(strings);
    let table = ClientTable::parse(out, "ns").unwrap();
    assert_eq!(table.container(), Container::Wdb2);
    assert_eq!(table.db2_header().build, 15595);
    assert_eq!(
        table.record(0).unwrap(),
        vec![Value::UInt(6948), Value::Str("Hearthstone".into())]
    );
}

#[test]
fn hostile_headers_are_typed_errors() {
    let good = wdbc(&[(1, 1, "x")]);
    let code =
        |data: Vec<u8>, format: &str| ClientTable::parse(data, format).err().map(|e| e.code());
    assert_eq!(
        code(good[..10].to_vec(), "nis"),
        Some("client_file_truncated")
    );
    assert_eq!(code(b"WDBX".repeat(8), "nis"), Some("client_file_invalid"));
    assert_eq!(code(good.clone(), "ni"), Some("client_file_invalid"));
    let mut huge = good.clone();
    set_u32(&mut huge, 4, u32::MAX);
    assert_eq!(code(huge, "nis"), Some("client_file_truncated"));
    let mut huge_size = good.clone();
    set_u32(&mut huge_size, 12, u32::MAX);
    assert_eq!(code(huge_size, "nis"), Some("client_file_truncated"));
    let mut small_record = good.clone();
    set_u32(&mut small_record, 12, 4);
    assert_eq!(code(small_record, "nis"), Some("client_file_invalid"));
    let mut strings = good.clone();
    set_u32(&mut strings, 16, u32::MAX);
    assert_eq!(code(strings, "nis"), Some("client_file_truncated"));
    let mut wdb2 = b"WDB2".to_vec();
    for word in [0u32, 1, 4, 0, 0, 20000, 0, 10, 5, 0, 0] {
        wdb2.extend_from_slice(&word.to_le_bytes());
    }
    assert_eq!(code(wdb2.clone(), "n"), Some("client_file_invalid"));
    set_u32(&mut wdb2, 32, 0);
    set_u32(&mut wdb2, 36, u32::MAX);
    assert_eq!(code(wdb2, "n"), Some("client_file_truncated"));
}

#[test]
fn strings_outside_the_block_are_typed_errors() {
    let mut past = wdbc(&[(1, 1, "abc")]);
    set_u32(&mut past, 20 + 8, 100);
    let table = ClientTable::parse(past, "nis").unwrap();
    assert_eq!(
        table.value(0, 2).unwrap_err().code(),
        "client_string_invalid"
    );
    assert_eq!(
        table.find_string(2, "abc", 5).unwrap_err().code(),
        "client_string_invalid"
    );
    let mut unterminated = wdbc(&[(1, 1, "abc")]);
    let last = unterminated.len() - 1;
    unterminated[last] = b'!';
    let table = ClientTable::parse(unterminated, "nis").unwrap();
    assert_eq!(
        table.value(0, 2).unwrap_err().code(),
        "client_string_invalid"
    );
}

#[test]
fn arguments_out_of_range_are_refused() {
    let table = ClientTable::parse(wdbc(&[(1, 1, "a")]), "nis").unwrap();
    assert_eq!(table.value(1, 0).unwrap_err().code(), "invalid_argument");
    assert_eq!(table.value(0, 3).unwrap_err().code(), "invalid_argument");
    assert_eq!(
        table.find_string(1, "a", 1).unwrap_err().code(),
        "invalid_argument"
    );
    assert_eq!(
        table.find_uint(2, &[1], 1).unwrap_err().code(),
        "invalid_argument"
    );
    let no_id = ClientTable::parse(wdbc(&[(1, 1, "a")]), "xis").unwrap();
    assert_eq!(no_id.find_ids(&[1]).unwrap_err().code(), "invalid_argument");
}

#[test]
fn every_truncation_of_a_valid_file_is_an_error_not_a_panic() {
    let good = wdbc(&[(1, 2, "one"), (2, 3, "two")]);
    for len in 0..good.len() {
        let result = ClientTable::parse(good[..len].to_vec(), "nis");
        assert!(result.is_err(), "length {len}");
    }
}
