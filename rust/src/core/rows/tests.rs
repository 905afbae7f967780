use super::number::NumberParts;
use super::scanner::{push_json_string, same_bytes, Scanner, Token};
use super::*;

fn parse(text: &str) -> RowSnapshot {
    RowSnapshot::parse(text.as_bytes().to_vec()).expect("valid snapshot")
}

fn parse_err(data: &[u8]) -> CoreError {
    RowSnapshot::parse(data.to_vec()).expect_err("should fail")
}

fn matching(snapshot: &RowSnapshot, column: &str, value: Scalar) -> Vec<usize> {
    let page = snapshot
        .lookup(&[(column, value)], None, 0, usize::MAX)
        .unwrap();
    assert_eq!(page.total, page.rows.len());
    page.rows.iter().map(|row| row.index).collect()
}

fn s(text: &str) -> Scalar {
    Scalar::Str(text.into())
}

#[test]
fn cell_is_sixteen_bytes() {
    assert_eq!(std::mem::size_of::<Cell>(), 16);
}

#[test]
fn array_kind_and_columns() {
    let snap = parse(r#"[{"id": 1, "name": "a"}, {"name": "b", "extra": null}]"#);
    assert_eq!(snap.kind(), SnapshotKind::Array);
    assert_eq!(snap.row_count(), 2);
    assert!(snap.has_rows());
    assert_eq!(snap.header_json(), None);
    assert_eq!(snap.columns().collect::<Vec<_>>(), ["id", "name", "extra"]);
    assert!(snap.has_column("extra"));
    assert!(!snap.has_column("missing"));
}

#[test]
fn document_header_and_rows() {
    let snap = parse(
        r#"{"format": "viano-database-snapshot", "rows": [{"id": 42}], "columns": [{"name": "id"}], "coverage": "partial"}"#,
    );
    assert_eq!(snap.kind(), SnapshotKind::Document);
    assert!(snap.has_rows());
    assert_eq!(snap.row_count(), 1);
    assert_eq!(
        snap.header_json(),
        Some(
            r#"{"format":"viano-database-snapshot","columns":[{"name": "id"}],"coverage":"partial"}"#
        )
    );
    assert_eq!(matching(&snap, "id", Scalar::Int(42)), [0]);
}

#[test]
fn document_without_rows() {
    let snap = parse(r#"{"format": "x", "we\"ird": 1}"#);
    assert!(!snap.has_rows());
    assert_eq!(snap.row_count(), 0);
    assert_eq!(snap.header_json(), Some(r#"{"format":"x","we\"ird":1}"#));
}

#[test]
fn escaped_rows_key_is_rows() {
    let snap = parse(r#"{"\u0072ows": [{"a": 1}]}"#);
    assert!(snap.has_rows());
    assert_eq!(snap.header_json(), Some("{}"));
}

#[test]
fn shapes_rejected() {
    for text in [
        "42",
        "\"x\"",
        "null",
        r#"{"rows": {}}"#,
        r#"{"rows": null}"#,
    ] {
        assert!(
            matches!(parse_err(text.as_bytes()), CoreError::RowsBadShape { .. }),
            "{text}"
        );
    }
    assert_eq!(
        parse_err(br#"[{"a": 1}, 2]"#),
        CoreError::RowsNotObject { index: 1 }
    );
    assert_eq!(
        parse_err(br#"{"rows": [[]]}"#),
        CoreError::RowsNotObject { index: 0 }
    );
}

#[test]
fn invalid_json_offsets() {
    assert_eq!(
        parse_err(b"[{\"a\": 1}"),
        CoreError::RowsInvalidJson { offset: 9 }
    );
    assert_eq!(parse_err(b"[] x"), CoreError::RowsInvalidJson { offset: 3 });
    assert!(matches!(parse_err(b""), CoreError::RowsInvalidJson { .. }));
    assert!(matches!(
        parse_err(br#"[{"a": NaN}]"#),
        CoreError::RowsInvalidJson { .. }
    ));
    assert!(matches!(
        parse_err(br#"[{"a": Infinity}]"#),
        CoreError::RowsInvalidJson { .. }
    ));
    assert!(matches!(
        parse_err(br#"[{"a": -Infinity}]"#),
        CoreError::RowsInvalidJson { .. }
    ));
    assert!(matches!(
        parse_err(br#"[{"a": 01}]"#),
        CoreError::RowsInvalidJson { .. }
    ));
    assert!(matches!(
        parse_err(br#"[{"a": "\ud800"}]"#),
        CoreError::RowsInvalidJson { .. }
    ));
    assert_eq!(
        parse_err(b"[{\"a\": \"\xff\"}]"),
        CoreError::RowsInvalidJson { offset: 8 }
    );
    assert_eq!(
        parse_err(b"\xEF\xBB\xBF[{\"a\": \"\xff\"}]"),
        CoreError::RowsInvalidJson { offset: 11 }
    );
    assert_eq!(
        parse_err(b"\xEF\xBB\xBF[] x"),
        CoreError::RowsInvalidJson { offset: 6 }
    );
    // Invalid JSON anywhere wins over a shape error before it.
    assert_eq!(
        parse_err(b"[1, {\"a\": x}]"),
        CoreError::RowsInvalidJson { offset: 10 }
    );
    assert!(matches!(
        parse_err(b"{\"rows\": 1, \"x\": ]"),
        CoreError::RowsInvalidJson { .. }
    ));
    assert!(matches!(
        parse_err(b"7 x"),
        CoreError::RowsInvalidJson { .. }
    ));
    assert_eq!(
        parse_err(b"[{}, 1, 2]"),
        CoreError::RowsNotObject { index: 1 }
    );
}

#[test]
fn duplicates_at_any_depth() {
    assert_eq!(
        parse_err(br#"[{"a": 1, "a": 2}]"#),
        CoreError::RowsDuplicateKey { offset: 10 }
    );
    assert_eq!(
        parse_err(br#"[{"a": {"b": 1, "b": 2}}]"#),
        CoreError::RowsDuplicateKey { offset: 16 }
    );
    assert!(matches!(
        parse_err(br#"[{"a": [{"b": [{"c": 1, "c": 1}]}]}]"#),
        CoreError::RowsDuplicateKey { .. }
    ));
    assert!(matches!(
        parse_err(br#"{"rows": [], "rows": []}"#),
        CoreError::RowsDuplicateKey { .. }
    ));
    assert!(matches!(
        parse_err(br#"{"x": 1, "\u0078": 2}"#),
        CoreError::RowsDuplicateKey { .. }
    ));
    assert!(matches!(
        parse_err(br#"{"h": {"k": 1, "k": 1}, "rows": []}"#),
        CoreError::RowsDuplicateKey { .. }
    ));
    // The same key in sibling objects or in different rows is fine.
    parse(r#"[{"a": {"b": 1}, "c": {"b": 2}}, {"a": 3}]"#);
}

#[test]
fn duplicates_in_large_nested_objects() {
    let members: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {i}")).collect();
    let ok = format!("[{{\"a\": {{{}}}}}]", members.join(","));
    parse(&ok);
    let bad = format!("[{{\"a\": {{{}, \"k50\": 0}}}}]", members.join(","));
    assert!(matches!(
        parse_err(bad.as_bytes()),
        CoreError::RowsDuplicateKey { .. }
    ));
}

#[test]
fn depth_limit() {
    let ok = format!(
        "[{{\"a\": {}{}}}]",
        "[".repeat(MAX_DEPTH - 3),
        "]".repeat(MAX_DEPTH - 3)
    );
    parse(&ok);
    let deep = format!(
        "[{{\"a\": {}{}}}]",
        "[".repeat(MAX_DEPTH),
        "]".repeat(MAX_DEPTH)
    );
    assert!(matches!(
        parse_err(deep.as_bytes()),
        CoreError::RowsBadShape { .. }
    ));
}

#[test]
fn typed_equality() {
    let snap =
        parse(r#"[{"v": true}, {"v": 1}, {"v": "1"}, {"v": 1.0}, {"v": null}, {"v": [1]}, {}]"#);
    assert_eq!(matching(&snap, "v", Scalar::Bool(true)), [0]);
    assert_eq!(matching(&snap, "v", Scalar::Int(1)), [1]);
    assert_eq!(matching(&snap, "v", s("1")), [2]);
    assert_eq!(matching(&snap, "v", Scalar::Float(1.0)), [3]);
    assert_eq!(matching(&snap, "v", Scalar::Null), [4]);
}

#[test]
fn floats_compare_by_value() {
    let snap = parse(
        r#"[{"v": 1.0}, {"v": 1.00}, {"v": 1e0}, {"v": 10E-1}, {"v": -0.0}, {"v": 0.0}, {"v": 1e400}, {"v": -1e400}]"#,
    );
    assert_eq!(matching(&snap, "v", Scalar::Float(1.0)), [0, 1, 2, 3]);
    assert_eq!(matching(&snap, "v", Scalar::Float(0.0)), [4, 5]);
    assert_eq!(matching(&snap, "v", Scalar::Float(f64::INFINITY)), [6]);
    assert_eq!(matching(&snap, "v", Scalar::Float(f64::NEG_INFINITY)), [7]);
    assert_eq!(
        matching(&snap, "v", Scalar::Float(f64::NAN)),
        Vec::<usize>::new()
    );
}

#[test]
fn integers_exact_at_any_size() {
    let big = "1180591620717411303424"; // 2**70
    let text = format!(
        r#"[{{"v": {big}}}, {{"v": -{big}}}, {{"v": -0}}, {{"v": 0}}, {{"v": 9223372036854775807}}, {{"v": -9223372036854775808}}, {{"v": 9223372036854775808}}]"#
    );
    let snap = parse(&text);
    assert_eq!(matching(&snap, "v", Scalar::integer(big).unwrap()), [0]);
    assert_eq!(
        matching(&snap, "v", Scalar::integer(&format!("-{big}")).unwrap()),
        [1]
    );
    assert_eq!(matching(&snap, "v", Scalar::Int(0)), [2, 3]);
    assert_eq!(matching(&snap, "v", Scalar::integer("-0").unwrap()), [2, 3]);
    assert_eq!(matching(&snap, "v", Scalar::Int(i64::MAX)), [4]);
    assert_eq!(matching(&snap, "v", Scalar::Int(i64::MIN)), [5]);
    assert_eq!(
        matching(&snap, "v", Scalar::integer("9223372036854775808").unwrap()),
        [6]
    );
    assert_eq!(
        matching(&snap, "v", Scalar::Float(0.0)),
        Vec::<usize>::new()
    );
    let page = snap
        .lookup(&[("v", Scalar::integer(big).unwrap())], None, 0, 10)
        .unwrap();
    assert_eq!(page.rows[0].fields, [("v", CellValue::BigInt(big))]);
}

#[test]
fn scalar_integer_normalizes() {
    assert_eq!(Scalar::integer("-0").unwrap(), Scalar::Int(0));
    assert_eq!(Scalar::integer("000042").unwrap(), Scalar::Int(42));
    assert_eq!(
        Scalar::integer("-00099999999999999999999").unwrap(),
        Scalar::BigInt("-99999999999999999999".into())
    );
    assert!(Scalar::integer("").is_err());
    assert!(Scalar::integer("-").is_err());
    assert!(Scalar::integer("1.0").is_err());
    assert!(Scalar::integer("+1").is_err());
}

#[test]
fn strings_compare_unescaped() {
    let snap = parse(
        r#"[{"s": "caf\u00e9"}, {"s": "café"}, {"s": "\ud83d\ude00"}, {"s": "a\"b\\c\n"}, {"s": "1; DROP TABLE x"}, {"s": ""}]"#,
    );
    assert_eq!(matching(&snap, "s", s("café")), [0, 1]);
    assert_eq!(matching(&snap, "s", s("😀")), [2]);
    assert_eq!(matching(&snap, "s", s("a\"b\\c\n")), [3]);
    assert_eq!(matching(&snap, "s", s("1; DROP TABLE x")), [4]);
    assert_eq!(matching(&snap, "s", s("")), [5]);
    let page = snap.lookup(&[("s", s("😀"))], None, 0, 1).unwrap();
    assert_eq!(page.rows[0].fields, [("s", CellValue::Str("😀"))]);
}

#[test]
fn escaped_keys_are_decoded() {
    let snap = parse(r#"[{"n\u00e4me": 1, "a\"b": 2}]"#);
    assert_eq!(snap.columns().collect::<Vec<_>>(), ["näme", "a\"b"]);
    assert_eq!(matching(&snap, "näme", Scalar::Int(1)), [0]);
}

#[test]
fn bom_is_skipped() {
    let snap = RowSnapshot::parse(b"\xEF\xBB\xBF[{\"a\": \"x\"}]").unwrap();
    assert_eq!(matching(&snap, "a", s("x")), [0]);
}

#[test]
fn missing_key_differs_from_null() {
    let snap = parse(r#"[{"a": null}, {"b": 1}]"#);
    assert_eq!(matching(&snap, "a", Scalar::Null), [0]);
    let page = snap
        .lookup(&[("b", Scalar::Int(1))], Some(&["a", "b"]), 0, 10)
        .unwrap();
    assert_eq!(page.rows[0].fields, [("b", CellValue::Int(1))]);
}

#[test]
fn nested_never_equals_scalar_and_decodes() {
    let snap =
        parse(r#"[{"n": [1, "x", {"k": null}], "m": {"z": 1.5, "big": 1180591620717411303424}}]"#);
    for value in [Scalar::Null, Scalar::Int(1), s("[1, \"x\", {\"k\": null}]")] {
        assert_eq!(matching(&snap, "n", value), Vec::<usize>::new());
    }
    let page = snap.lookup(&[("n", Scalar::Null)], None, 0, 1).unwrap();
    assert_eq!(page.total, 0);
    let fields = snap.fields(0, None);
    let CellValue::Nested(raw) = fields[0].1 else {
        panic!("nested")
    };
    assert_eq!(
        decode_nested(raw).unwrap(),
        JsonTree::Array(vec![
            JsonTree::Int(1),
            JsonTree::Str("x".into()),
            JsonTree::Object(vec![("k".into(), JsonTree::Null)]),
        ])
    );
    let CellValue::Nested(raw) = fields[1].1 else {
        panic!("nested")
    };
    assert_eq!(
        decode_nested(raw).unwrap(),
        JsonTree::Object(vec![
            ("z".into(), JsonTree::Float(1.5)),
            (
                "big".into(),
                JsonTree::BigInt("1180591620717411303424".into())
            ),
        ])
    );
}

#[test]
fn lookup_and_projection_paging() {
    let snap =
        parse(r#"[{"k": 1, "a": "x", "b": 2}, {"b": 3, "k": 1}, {"k": 2}, {"k": 1, "a": "y"}]"#);
    let page = snap
        .lookup(
            &[("k", Scalar::Int(1))],
            Some(&["b", "a", "b", "nope"]),
            0,
            10,
        )
        .unwrap();
    assert_eq!(page.total, 3);
    let rows: Vec<_> = page
        .rows
        .iter()
        .map(|r| (r.index, r.fields.clone()))
        .collect();
    assert_eq!(
        rows,
        [
            (
                0,
                vec![("b", CellValue::Int(2)), ("a", CellValue::Str("x"))]
            ),
            (1, vec![("b", CellValue::Int(3))]),
            (3, vec![("a", CellValue::Str("y"))]),
        ]
    );
    let page = snap.lookup(&[("k", Scalar::Int(1))], None, 1, 1).unwrap();
    assert_eq!(page.total, 3);
    assert_eq!(page.rows.len(), 1);
    assert_eq!(page.rows[0].index, 1);
    assert_eq!(
        page.rows[0].fields,
        [("b", CellValue::Int(3)), ("k", CellValue::Int(1))]
    );
    let page = snap.lookup(&[("k", Scalar::Int(1))], None, 5, 10).unwrap();
    assert_eq!((page.total, page.rows.len()), (3, 0));
    let page = snap.lookup(&[("k", Scalar::Int(1))], None, 0, 0).unwrap();
    assert_eq!((page.total, page.rows.len()), (3, 0));
    let page = snap
        .lookup(&[("k", Scalar::Int(1)), ("a", s("y"))], None, 0, 10)
        .unwrap();
    assert_eq!(page.rows.iter().map(|r| r.index).collect::<Vec<_>>(), [3]);
    let page = snap
        .lookup(&[("k", Scalar::Int(1)), ("zzz", Scalar::Null)], None, 0, 10)
        .unwrap();
    assert_eq!(page.total, 0);
    let page = snap
        .lookup(&[("k", Scalar::Int(1))], Some(&[]), 0, 1)
        .unwrap();
    assert!(page.rows[0].fields.is_empty());
    assert!(matches!(
        snap.lookup(&[], None, 0, 1),
        Err(CoreError::InvalidArgument { .. })
    ));
}

#[test]
fn find_references_reports_columns() {
    let snap = parse(r#"[{"a": 7, "b": 7, "c": 7}, {"a": 1, "c": 7}, {"b": "7"}, {"c": 7.0}]"#);
    let page = snap
        .find_references(
            &Scalar::Int(7),
            &["c", "a", "zzz", "c"],
            Some(&["a"]),
            0,
            10,
        )
        .unwrap();
    assert_eq!(page.total, 2);
    assert_eq!(page.rows[0].index, 0);
    assert_eq!(page.rows[0].matched, ["c", "a"]);
    assert_eq!(page.rows[0].fields, [("a", CellValue::Int(7))]);
    assert_eq!(page.rows[1].index, 1);
    assert_eq!(page.rows[1].matched, ["c"]);
    let page = snap
        .find_references(&Scalar::Int(7), &["zzz"], None, 0, 10)
        .unwrap();
    assert_eq!(page.total, 0);
    assert!(matches!(
        snap.find_references(&Scalar::Int(7), &[], None, 0, 1),
        Err(CoreError::InvalidArgument { .. })
    ));
}

#[test]
fn shape_prediction_handles_varying_key_orders() {
    let snap = parse(r#"[{"a": 1, "b": 2}, {"b": 3, "a": 4}, {"a": 5}, {"c": 6, "a": 7, "b": 8}]"#);
    assert_eq!(snap.columns().collect::<Vec<_>>(), ["a", "b", "c"]);
    assert_eq!(matching(&snap, "a", Scalar::Int(4)), [1]);
    assert_eq!(matching(&snap, "b", Scalar::Int(8)), [3]);
    assert_eq!(matching(&snap, "a", Scalar::Int(7)), [3]);
}

/// The fast path's value for `token`, if it takes it.
fn fast_float(token: &str) -> Option<f64> {
    let number = NumberParts::scan(token.as_bytes(), 0).expect("valid number");
    assert_eq!(number.end, token.len());
    number.exact_float()
}

fn scanned(token: &str) -> Token {
    Scanner::new(token, 0).number().expect("valid number")
}

#[test]
fn numbers_scan_like_std_and_python() {
    for (token, expected) in [
        ("0", 0i64),
        ("-0", 0),
        ("7", 7),
        ("-7", -7),
        ("9223372036854775807", i64::MAX),
        ("-9223372036854775808", i64::MIN),
    ] {
        assert!(
            matches!(scanned(token), Token::Int(v) if v == expected),
            "{token}"
        );
    }
    for token in [
        "9223372036854775808",
        "-9223372036854775809",
        "10000000000000000000",
        "123456789012345678901234",
    ] {
        assert!(
            matches!(scanned(token), Token::BigInt(span) if span == (0..token.len())),
            "{token}"
        );
    }
    for token in [
        "1e400",
        "-1e400",
        "1e99999999999999",
        "0.0",
        "-0.0",
        "1e-99999999999",
        "1.7976931348623157e308",
    ] {
        let Token::Float(value) = scanned(token) else {
            panic!("{token}")
        };
        assert_eq!(
            value.to_bits(),
            token.parse::<f64>().unwrap().to_bits(),
            "{token}"
        );
    }
    for bad in ["-", "01", "1.", ".5", "1e", "1e+", "+1", "--1", "-a"] {
        let mut scanner = Scanner::new(bad, 0);
        let complete = scanner.number().is_ok() && scanner.pos == bad.len();
        assert!(!complete, "{bad}");
    }
}

#[test]
fn exact_float_agrees_with_std() {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut fast = 0;
    for _ in 0..200_000 {
        let int = next() % 10u64.pow((next() % 17) as u32 + 1);
        let digits = (next() % 12) as usize;
        let fraction = format!(
            "{:0width$}",
            next() % 10u64.pow(digits as u32),
            width = digits
        );
        let sign = if next() % 2 == 0 { "-" } else { "" };
        let exponent = match next() % 4 {
            0 => String::new(),
            1 => format!("e{}", (next() % 30) as i64 - 15),
            2 => format!("E+{}", next() % 25),
            _ => format!("e-{}", next() % 400),
        };
        let dot = if digits > 0 || exponent.is_empty() {
            format!(".{fraction}0")
        } else {
            String::new()
        };
        let token = format!("{sign}{int}{dot}{exponent}");
        let expected: f64 = token.parse().unwrap();
        if let Some(value) = fast_float(&token) {
            fast += 1;
            assert_eq!(value.to_bits(), expected.to_bits(), "{token}");
        }
    }
    assert!(fast > 50_000, "fast path taken {fast} times");
    for token in [
        "0.0",
        "-0.0",
        "1e0",
        "10E-1",
        "123456789012345.6",
        "9007199254740993.0",
        "1e22",
        "1e23",
        "0.1e-21",
    ] {
        let expected: f64 = token.parse().unwrap();
        assert_eq!(
            fast_float(token).unwrap_or(expected).to_bits(),
            expected.to_bits(),
            "{token}"
        );
    }
}

#[test]
fn same_bytes_compares_exactly() {
    let a = b"abcdefghijklmnopqrstuvwxyz";
    for len in 0..a.len() {
        assert!(same_bytes(&a[..len], &a[..len]));
        for flip in 0..len {
            let mut b = a[..len].to_vec();
            b[flip] ^= 1;
            assert!(!same_bytes(&a[..len], &b), "{len} {flip}");
        }
    }
    assert!(!same_bytes(b"ab", b"abc"));
}

#[test]
fn json_string_encoding() {
    let mut out = String::new();
    push_json_string(&mut out, "a\"b\\c\n\u{1}é");
    assert_eq!(out, r#""a\"b\\c\n\u0001é""#);
}
