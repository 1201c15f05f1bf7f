//! Tests of the YAML reader: real manifests, every scalar style, streams and errors.

use super::*;
use serde_json::json;

fn read(text: &str) -> Value {
    from_str(text).unwrap_or_else(|e| panic!("{e}"))
}

fn error(text: &str) -> YamlError {
    documents(text).find_map(|d| d.err()).expect("an error")
}

#[test]
fn the_kubernetes_io_nginx_deployment_reads_as_json() {
    let text = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  labels:
    app: nginx
spec:
  replicas: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports:
        - containerPort: 80
";
    assert_eq!(
        read(text),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "nginx-deployment", "labels": {"app": "nginx"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"metadata": {"labels": {"app": "nginx"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.14.2",
                        "ports": [{"containerPort": 80}]}]}}}})
    );
}

#[test]
fn the_kubernetes_io_pod_with_command_and_indented_sequences_reads() {
    let text = "apiVersion: v1
kind: Pod
metadata:
  name: command-demo
  labels:
    purpose: demonstrate-command
spec:
  containers:
    - name: command-demo-container
      image: debian
      command: [\"printenv\"]
      args: [\"HOSTNAME\", \"KUBERNETES_PORT\"]
      env:
        - name: MESSAGE
          value: \"hello world\"
  restartPolicy: OnFailure
";
    let v = read(text);
    assert_eq!(v["spec"]["containers"][0]["command"], json!(["printenv"]));
    assert_eq!(v["spec"]["containers"][0]["args"], json!(["HOSTNAME", "KUBERNETES_PORT"]));
    assert_eq!(v["spec"]["containers"][0]["env"], json!([{"name": "MESSAGE", "value": "hello world"}]));
    assert_eq!(v["spec"]["restartPolicy"], json!("OnFailure"));
}

#[test]
fn a_multi_document_stream_yields_each_document_and_empty_ones_as_null() {
    let text = "apiVersion: v1\nkind: Service\n---\n---\n# only a comment\napiVersion: v1\nkind: Pod\n...\n";
    let docs: Vec<Value> = documents(text).map(|d| d.unwrap()).collect();
    assert_eq!(
        docs,
        vec![json!({"apiVersion": "v1", "kind": "Service"}), Value::Null, json!({"apiVersion": "v1", "kind": "Pod"})]
    );
}

#[test]
fn an_empty_or_comment_only_stream_is_one_null_document() {
    assert_eq!(documents("").map(|d| d.unwrap()).collect::<Vec<_>>(), vec![Value::Null]);
    assert_eq!(documents("# nothing\n\n").map(|d| d.unwrap()).collect::<Vec<_>>(), vec![Value::Null]);
    assert_eq!(from_str("").unwrap(), Value::Null);
}

#[test]
fn a_trailing_document_marker_starts_an_empty_document() {
    let docs: Vec<Value> = documents("a: 1\n---\n").map(|d| d.unwrap()).collect();
    assert_eq!(docs, vec![json!({"a": 1}), Value::Null]);
}

#[test]
fn plain_scalars_resolve_as_serde_yaml_did() {
    let v = read(
        "a: ~\nb: null\nc:\nd: true\ne: False\nf: 42\ng: -7\nh: 0x1F\ni: 0o17\nj: 1.5\nk: 0123\nl: yes\nm: 1e3\nn: .inf\no: +5\np: 3Gi\nq: 250m\nr: 1.14.2\n",
    );
    assert_eq!(
        v,
        json!({"a": null, "b": null, "c": null, "d": true, "e": false, "f": 42, "g": -7, "h": 31, "i": 15,
            "j": 1.5, "k": "0123", "l": "yes", "m": 1000.0, "n": null, "o": 5, "p": "3Gi", "q": "250m", "r": "1.14.2"})
    );
}

#[test]
fn quoted_scalars_stay_strings_and_unescape() {
    let v = read("a: \"80\"\nb: 'true'\nc: 'it''s'\nd: \"tab\\there \\u00e9 \\\"q\\\"\"\ne: \"\"\n");
    assert_eq!(v, json!({"a": "80", "b": "true", "c": "it's", "d": "tab\there é \"q\"", "e": ""}));
}

#[test]
fn multi_line_quoted_scalars_fold_their_line_breaks() {
    let v = read("a: \"one\n  two\n\n  three\"\nb: 'x\n  y'\nc: \"joined\\\n  together\"\n");
    assert_eq!(v, json!({"a": "one two\nthree", "b": "x y", "c": "joinedtogether"}));
}

#[test]
fn literal_block_scalars_keep_line_breaks_with_each_chomping() {
    let v =
        read("clip: |\n  line one\n    indented\n  line three\n\nstrip: |-\n  text\n\nkeep: |+\n  text\n\nnext: 1\n");
    assert_eq!(v["clip"], json!("line one\n  indented\nline three\n"));
    assert_eq!(v["strip"], json!("text"));
    assert_eq!(v["keep"], json!("text\n\n"));
    assert_eq!(v["next"], json!(1));
}

#[test]
fn folded_block_scalars_join_lines_with_spaces() {
    let v = read("a: >\n  one\n  two\n\n  three\n    more\n  four\nb: >-\n  x\n  y\n");
    assert_eq!(v["a"], json!("one two\nthree\n  more\nfour\n"));
    assert_eq!(v["b"], json!("x y"));
}

#[test]
fn block_scalars_take_an_explicit_indentation_and_may_hold_comment_like_lines() {
    let v = read("script: |2\n    # not a comment\n  done\n");
    assert_eq!(v["script"], json!("  # not a comment\ndone\n"));
}

#[test]
fn a_block_scalar_in_a_sequence_item_reads() {
    let v = read("args:\n- sh\n- -c\n- |\n  echo hi\n  sleep 1\n- last\n");
    assert_eq!(v["args"], json!(["sh", "-c", "echo hi\nsleep 1\n", "last"]));
}

#[test]
fn flow_collections_nest_and_span_lines() {
    let v = read("a: [1, two, {x: y, \"q\": [true]}]\nb: {}\nc: []\nd: {\"k\":1,\"l\":\"m\"}\ne: [\n  a,\n  b,\n]\n");
    assert_eq!(
        v,
        json!({"a": [1, "two", {"x": "y", "q": [true]}], "b": {}, "c": [], "d": {"k": 1, "l": "m"}, "e": ["a", "b"]})
    );
}

#[test]
fn a_json_document_reads_as_yaml() {
    let v = read(
        r#"{"spec": {"replicas": 3, "template": {"metadata": {"labels": null}}}, "list": [{"op": "remove", "path": "/a"}]}"#,
    );
    assert_eq!(v["spec"]["replicas"], json!(3));
    assert_eq!(v["list"][0]["path"], json!("/a"));
}

#[test]
fn comments_are_ignored_everywhere_but_inside_scalars() {
    let v = read("# head\na: 1 # trailing\n# between\nb: \"#not\" # c\nc: x#y\nd:\n  # only comment\n  e: 2\n");
    assert_eq!(v, json!({"a": 1, "b": "#not", "c": "x#y", "d": {"e": 2}}));
}

#[test]
fn plain_scalars_may_continue_on_deeper_lines() {
    let v = read("a: one\n  two\n\n  three\nb: -x y\n");
    assert_eq!(v, json!({"a": "one two\nthree", "b": "-x y"}));
}

#[test]
fn anchors_and_aliases_copy_nodes() {
    let v = read("base: &labels\n  app: web\ncopy: *labels\nname: &n web\nother: *n\n");
    assert_eq!(v["copy"], json!({"app": "web"}));
    assert_eq!(v["other"], json!("web"));
}

#[test]
fn the_str_tag_keeps_a_plain_scalar_a_string() {
    assert_eq!(read("a: !!str 80\n"), json!({"a": "80"}));
}

#[test]
fn sequences_of_sequences_and_empty_items_read() {
    let v = read("- - a\n  - b\n-\n- c: 1\n  d: 2\n");
    assert_eq!(v, json!([["a", "b"], null, {"c": 1, "d": 2}]));
}

#[test]
fn keys_are_text_whatever_they_look_like() {
    let v = read("1: a\ntrue: b\n\"x y\": c\n");
    assert_eq!(v, json!({"1": "a", "true": "b", "x y": "c"}));
}

#[test]
fn later_duplicate_keys_win() {
    assert_eq!(read("a: 1\na: 2\n"), json!({"a": 2}));
}

#[test]
fn windows_line_endings_read_like_unix_ones() {
    assert_eq!(read("a: 1\r\nb:\r\n  - x\r\n"), json!({"a": 1, "b": ["x"]}));
}

#[test]
fn a_mapping_value_on_the_keys_line_is_an_error_on_that_line() {
    let e = error("apiVersion: v1\nkind: Pod\nmetadata: name: x\n");
    assert_eq!(e, YamlError { message: "mapping values are not allowed in this context".into(), line: 3 });
}

#[test]
fn a_deeper_line_with_a_key_after_a_value_is_an_error() {
    let e = error("a: 1\n  b: 2\n");
    assert_eq!((e.message.as_str(), e.line), ("mapping values are not allowed in this context", 2));
}

#[test]
fn a_key_out_of_line_is_an_error_on_its_line() {
    let e = error("a:\n    b: 1\n  c: 2\n");
    assert_eq!((e.message.as_str(), e.line), ("did not find expected key", 3));
}

#[test]
fn a_line_without_a_colon_in_a_mapping_is_an_error() {
    let e = error("a: 1\nb\nc: 2\n");
    assert_eq!(e.message, "could not find expected ':'");
}

#[test]
fn tabs_may_not_indent() {
    let e = error("a:\n\tb: 1\n");
    assert_eq!((e.message.as_str(), e.line), ("found character that cannot start any token", 2));
}

#[test]
fn unterminated_quotes_and_flow_collections_are_errors() {
    assert_eq!(error("a: \"open\n").message, "found unexpected end of stream");
    assert_eq!(error("a: [1, 2\n").message, "did not find expected ',' or ']'");
    assert_eq!(error("a: {b: 1\n").message, "did not find expected ',' or '}'");
}

#[test]
fn an_unknown_alias_is_an_error() {
    assert_eq!(error("a: *nope\n").message, "unknown anchor");
}

#[test]
fn an_error_in_a_later_document_comes_after_the_earlier_ones() {
    let mut docs = documents("a: 1\n---\nb: c: d\n");
    assert_eq!(docs.next(), Some(Ok(json!({"a": 1}))));
    assert_eq!(docs.next().map(|d| d.map_err(|e| e.line)), Some(Err(3)));
    assert_eq!(docs.next(), None);
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = "[".repeat(10_000);
    assert_eq!(error(&deep).message, "exceeded max depth of 128");
    let mut block = String::new();
    for i in 0..500 {
        block.push_str(&" ".repeat(i));
        block.push_str("- \n");
    }
    assert!(documents(&block).all(|d| d.is_ok() || d.unwrap_err().message == "exceeded max depth of 128"));
}

#[test]
fn arbitrary_bytes_never_panic() {
    for text in [
        "- [", "{", "a: |", "a: >-\n", "\"\\", "'", ": x", "- - -", "&", "*", "!", "a: &", "? x", "[a: ]", "\t", "---a",
    ] {
        let _ = documents(text).count();
    }
}

/// The classic bomb: nine anchors, each a list of nine aliases of the one before (9^9 strings).
fn billion_laughs(levels: usize) -> String {
    let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\n");
    text.push_str("a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for i in 1..levels {
        let alias = format!("*a{}", i - 1);
        text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![alias; 9].join(",")));
    }
    text
}

#[test]
fn an_alias_bomb_is_refused_with_go_yamls_words_and_no_line() {
    for levels in [7, 9] {
        let e = error(&billion_laughs(levels));
        assert_eq!((e.message.as_str(), e.line), (EXCESSIVE_ALIASING, 0));
        assert_eq!(e.to_string(), "yaml: document contains excessive aliasing");
    }
}

#[test]
fn an_alias_bomb_is_refused_after_copying_a_few_thousand_nodes_at_most() {
    let text = billion_laughs(9);
    let mut docs = documents(&text);
    assert!(matches!(docs.next(), Some(Err(_))));
    // What was built: every node decoded except the expansion that was refused.
    let built = docs.p.decoded;
    assert!(built < 200_000, "{built} nodes counted");
    let copied_before_refusal = docs.p.aliased - docs.p.anchors.values().map(|(_, n)| *n).max().unwrap_or(0);
    eprintln!("alias bomb: {built} nodes counted, {copied_before_refusal} copied from aliases before the refusal");
    assert!(copied_before_refusal < 10_000, "{copied_before_refusal} nodes copied from aliases");
}

#[test]
fn a_chain_of_merge_keys_each_naming_the_last_is_refused() {
    let mut text = String::from("m0: &m0 {k0: v}\n");
    for i in 1..2000 {
        text.push_str(&format!("m{i}: &m{i}\n  <<: *m{}\n  k{i}: v\n", i - 1));
    }
    assert_eq!(error(&text).message, EXCESSIVE_ALIASING);
}

#[test]
fn ordinary_use_of_anchors_stays_well_inside_the_alias_budget() {
    // A shared block of environment variables named by 200 containers.
    let mut text = String::from("env: &env\n");
    for i in 0..20 {
        text.push_str(&format!("  - name: V{i}\n    value: \"{i}\"\n"));
    }
    text.push_str("containers:\n");
    for i in 0..200 {
        text.push_str(&format!("  - name: c{i}\n    env: *env\n"));
    }
    let value = read(&text);
    assert_eq!(value["containers"][199]["env"][19]["value"], "19");
    // A small bomb (under a thousand nodes) is not refused either, as go-yaml does not.
    let small = read(&billion_laughs(3));
    assert_eq!(small["a2"][8][8][8], "lol");
}

#[test]
fn thousands_of_anchors_are_looked_up_without_a_scan() {
    let mut text = String::new();
    for i in 0..50_000 {
        text.push_str(&format!("k{i}: &a{i} v\n"));
    }
    for i in 0..50_000 {
        text.push_str(&format!("r{i}: *a{i}\n"));
    }
    let started = std::time::Instant::now();
    assert_eq!(read(&text)["r49999"], "v");
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
}

#[test]
fn bytes_that_are_not_utf8_are_named_as_libyamls_reader_names_them() {
    assert_eq!(utf8_problem(b"a: b\n"), None);
    assert_eq!(utf8_problem(b"a: \x80\n"), Some("invalid leading UTF-8 octet"));
    assert_eq!(utf8_problem(b"a: \xff\n"), Some("invalid leading UTF-8 octet"));
    assert_eq!(utf8_problem(b"a: \xc3"), Some("incomplete UTF-8 octet sequence"));
    assert_eq!(utf8_problem(b"a: \xc3x\n"), Some("invalid trailing UTF-8 octet"));
    assert_eq!(utf8_problem(b"a: \xc0\xaf\n"), Some("invalid length of a UTF-8 sequence"));
    assert_eq!(utf8_problem(b"a: \xed\xa0\x80\n"), Some("invalid Unicode character"));
}
