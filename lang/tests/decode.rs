//! Reading evaluated values as typed data (`Session::decode`): the shapes
//! serde asks for, the errors a front end words, and what is never forced.

use std::path::Path;

use kdeploy_lang::decode::DecodeError;
use kdeploy_lang::io::Stdlib;
use kdeploy_lang::{Session, Value};
use serde::Deserialize;

fn eval(s: &mut Session, text: &str) -> Value {
    s.eval_expr(text, Path::new("."), &[]).expect("evaluates")
}

fn session() -> Session {
    let mut s = Session::new(vec![std::env::temp_dir()], Stdlib::Absent);
    s.ev.trace = Box::new(|_| {});
    s
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Record {
    name: String,
    port: Option<u16>,
    tags: Vec<String>,
    source: Source,
    #[serde(default)]
    skipped: serde::de::IgnoredAny,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Source {
    Text(String),
    Artifact { url: String },
}

fn decode(text: &str) -> Result<Record, DecodeError> {
    let mut s = session();
    let v = eval(&mut s, text);
    s.decode::<Record>(&v)
}

#[test]
fn records_options_lists_and_tagged_enums_decode_lazily() {
    let r = decode(
        r#"let n = "a" + "b"; in { name = n; port = null; tags = map (x: "t${x}") [ "1" "2" ]; source.text = "hi"; }"#,
    )
    .unwrap();
    assert_eq!(r.name, "ab");
    assert_eq!(r.port, None);
    assert_eq!(r.tags, ["t1", "t2"]);
    assert_eq!(r.source, Source::Text("hi".into()));
    let r = decode(r#"{ name = "x"; port = 22; tags = [ ]; source.artifact.url = "http://h/f"; }"#).unwrap();
    assert_eq!(r.port, Some(22));
    assert_eq!(r.source, Source::Artifact { url: "http://h/f".into() });
}

#[test]
fn a_skipped_field_is_never_forced() {
    let r = decode(r#"{ name = "x"; port = 1; tags = [ ]; source.text = ""; skipped = throw "forced"; }"#);
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn a_wrong_shape_names_the_attribute_path() {
    let e = decode(r#"{ name = "x"; port = 1; tags = [ "a" 2 ]; source.text = ""; }"#).unwrap_err();
    let DecodeError::Shape { path, message } = &e else { panic!("{e:?}") };
    assert_eq!(path, "tags[1]");
    assert!(message.contains("expected a string"), "{message}");
    let e = decode(r#"{ name = "x"; port = 70000; tags = [ ]; source.text = ""; }"#).unwrap_err();
    assert!(e.to_string().starts_with("port: "), "{e}");
    let e = decode(r#"{ name = "x"; port = 1; tags = [ ]; source.text = ""; extra = 1; }"#).unwrap_err();
    assert!(e.to_string().contains("unknown field `extra`"), "{e}");
}

#[test]
fn an_evaluation_error_inside_is_the_evaluators_error() {
    let e = decode(r#"{ name = throw "no name here"; port = 1; tags = [ ]; source.text = ""; }"#).unwrap_err();
    let DecodeError::Eval(e) = e else { panic!("{e:?}") };
    assert!(e.message.contains("no name here"), "{}", e.message);
}

#[test]
fn a_value_inside_itself_is_an_error_not_a_crash() {
    let mut s = session();
    let v = eval(&mut s, "let x = { a = [ x ]; }; in x");
    let e = s.decode::<serde_json::Value>(&v).unwrap_err();
    assert!(e.to_string().contains("nested deeper than"), "{e}");
}

#[test]
fn json_data_decodes_as_builtins_to_json_prints_it() {
    let mut s = session();
    let v = eval(&mut s, r#"{ b = [ 1 2.5 true null "s" ]; a = { __toString = self: "str"; }; p = /tmp/x; }"#);
    let decoded = s.decode::<serde_json::Value>(&v).unwrap();
    let printed: serde_json::Value = serde_json::from_str(&s.to_json(&v).unwrap()).unwrap();
    assert_eq!(decoded, printed);
}

/// A type that asks for its value's identity (`decode::SHARED`), as the
/// engine's shared phases do: the identity, and the value only when wanted.
#[derive(Debug, PartialEq)]
struct Identified {
    id: usize,
    tags: Option<Tags>,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Tags {
    tags: Vec<String>,
}

impl<'de> Deserialize<'de> for Identified {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Identified;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an identified value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Identified, A::Error> {
                let id: usize = seq.next_element()?.expect("an identity");
                // read the value the first time an identity is seen only
                let tags = if id.is_multiple_of(2) { seq.next_element::<Tags>()? } else { None };
                Ok(Identified { id, tags })
            }
        }
        d.deserialize_newtype_struct(kdeploy_lang::decode::SHARED, V)
    }
}

#[test]
fn shared_values_are_identified_by_their_set() {
    #[derive(Deserialize)]
    struct Items {
        items: Vec<Identified>,
    }
    let mut s = session();
    let v = eval(
        &mut s,
        r#"let shared = { tags = [ "a" ]; }; own = n: { tags = [ n ]; }; in
           { items = [ shared (own "b") shared (own "b") ]; }"#,
    );
    let items = s.decode::<Items>(&v).unwrap().items;
    assert_ne!(items[0].id, 0);
    assert_eq!(items[0].id, items[2].id, "one set, one identity");
    assert_ne!(items[1].id, items[3].id, "equal sets made twice are two");
    assert_ne!(items[0].id, items[1].id);
    assert_eq!(
        items[0].tags.as_ref().map(|t| &t.tags[..]),
        items[0].id.is_multiple_of(2).then_some(&["a".to_string()][..])
    );
}

#[test]
fn errors_in_a_shared_value_keep_their_path() {
    #[derive(Deserialize, Debug)]
    struct Items {
        #[allow(dead_code)]
        items: Vec<Identified>,
    }
    let mut s = session();
    let v = eval(&mut s, r#"{ items = [ { tags = [ "a" 1 ]; } ]; }"#);
    let err = s.decode::<Items>(&v).unwrap_err().to_string();
    assert!(err.starts_with("items[0].tags[1]: invalid type: integer"), "{err}");
}

#[test]
fn an_evaluator_given_anothers_syntax_trees_evaluates_alike() {
    let text = r#"let f = x: { items = [ { tags = [ x ]; } ]; }; in f "a""#;
    let mut first = session();
    let v = eval(&mut first, text);
    let want = first.to_json(&v).unwrap();
    let mut second = session();
    second.ev.parses = first.ev.parses.clone();
    let v = eval(&mut second, text);
    assert_eq!(second.to_json(&v).unwrap(), want);
    // a text that did not parse is not kept: it fails again, with its error
    for s in [&mut first, &mut second] {
        let Err(err) = s.eval_expr("{ a = ; }", Path::new("."), &[]) else { panic!("a syntax error evaluated") };
        assert!(!err.message.is_empty());
    }
}
