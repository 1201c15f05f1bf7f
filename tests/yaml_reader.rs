//! kubeloop's YAML reader against serde_yaml (a dev-dependency only): every manifest the
//! project ships or replays, and tricky snippets, read to the same JSON, or both fail on one line.

use serde::Deserialize;
use serde_json::Value;

use kubeloop::views::examples;

/// What serde_yaml made of a stream: each document, or the line and message of the first error.
fn serde_yaml_documents(text: &str) -> Vec<Result<Value, (usize, String)>> {
    let mut out = Vec::new();
    for de in serde_yaml::Deserializer::from_str(text) {
        match Value::deserialize(de) {
            Ok(v) => out.push(Ok(v)),
            Err(e) => {
                let text = e.to_string();
                let message = text.split(" at line ").next().unwrap_or_default().to_string();
                out.push(Err((e.location().map_or(0, |l| l.line()), message)));
                break;
            }
        }
    }
    out
}

/// Ours, with the two limits it words as go-yaml (and so kubectl) does said in serde_yaml's
/// words: the same refusal, told differently.
fn ours(text: &str) -> Vec<Result<Value, (usize, String)>> {
    let as_serde_yaml = |message: String| match message.as_str() {
        kubeloop::yaml::EXCESSIVE_ALIASING => "repetition limit exceeded".to_string(),
        m if m.starts_with("exceeded max depth of ") => "recursion limit exceeded".to_string(),
        _ => message,
    };
    kubeloop::yaml::documents(text).map(|d| d.map_err(|e| (e.line, as_serde_yaml(e.message)))).collect()
}

fn assert_same(text: &str) {
    assert_eq!(ours(text), serde_yaml_documents(text), "reading:\n{text}");
}

/// The manifests fed to `kubectl ... <<EOF` in the scenario transcripts.
fn transcript_manifests() -> Vec<String> {
    let mut out = Vec::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let mut current: Option<String> = None;
        for line in text.lines() {
            match current.as_mut() {
                Some(doc) if line == "EOF" => {
                    out.push(std::mem::take(doc));
                    current = None;
                }
                Some(doc) => {
                    doc.push_str(line);
                    doc.push('\n');
                }
                None if line.starts_with("$ ") && line.ends_with("<<EOF") => current = Some(String::new()),
                None => {}
            }
        }
    }
    out
}

/// The default cluster's built-in manifests (`src/cluster/manifests/`).
fn bootstrap_manifests() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cluster/manifests");
    let mut files: Vec<_> = std::fs::read_dir(dir).expect("the manifests folder").flatten().map(|e| e.path()).collect();
    files.sort();
    files.into_iter().map(|f| std::fs::read_to_string(f).expect("a manifest")).collect()
}

#[test]
fn every_scenario_manifest_reads_as_serde_yaml_read_it() {
    let manifests = transcript_manifests();
    assert!(manifests.len() > 50, "{}", manifests.len());
    for text in manifests {
        assert_same(&text);
    }
}

#[test]
fn every_gallery_example_reads_as_serde_yaml_read_it() {
    for example in examples::EXAMPLES {
        assert_same(example.manifest);
    }
}

#[test]
fn every_built_in_manifest_reads_as_serde_yaml_read_it() {
    let manifests = bootstrap_manifests();
    assert!(manifests.len() > 5, "{}", manifests.len());
    for text in manifests {
        assert_same(&text);
    }
}

#[test]
fn tricky_snippets_read_as_serde_yaml_read_them() {
    let snippets = [
        "a: 1\nb: -2\nc: 0x10\nd: 0o7\ne: 0b101\nf: +3\ng: 007\nh: 1.5e3\ni: -.inf\nj: .nan\nk: 1_000\nl: 0.0\n",
        "a: ~\nb: Null\nc: TRUE\nd: off\ne: 'x'\nf: \"y\\n\"\ng:\n",
        "list:\n- a\n- b: 1\n  c: 2\n- - x\n  - y\n- [1, 2]\n- {k: v}\n",
        "nested:\n  deeper:\n    deepest: value\n  back: 1\ntop: 2\n",
        "script: |\n  #!/bin/sh\n  echo \"hi\"\n\n  exit 0\nfolded: >\n  a\n  b\n\n  c\nkeep: |+\n  x\n\nstrip: >-\n  y\n",
        "text: \"multi\n  line\n\n  quoted\"\nsingle: 'it''s\n  here'\n",
        "plain: one\n  two\n  three\nnext: x\n",
        "# leading comment\n---\na: 1 # c\n---\n# just a comment\n---\nb: [x, y] # c\n...\n",
        "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"x\"}}",
        "[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 3}]",
        "anchors: &a\n  x: 1\nuse: *a\n",
        "env:\n- name: A\n  value: \"1\"\n- name: B\n  valueFrom:\n    fieldRef:\n      fieldPath: status.podIP\n",
        "args: [\"--port\", \"8080\"]\ncommand:\n  - sh\n  - -c\n  - |\n    while true; do sleep 1; done\n",
        "key with spaces: v\n\"quoted key\": w\n'single': z\n",
        "a: 'x: y'\nb: x:y\nc: http://example.com:80/path\nd: a # b\ne: a#b\n",
        "apiVersion: v1\nkind: Pod\nmetadata: name: x\n",
        "a: 1\n  b: 2\n",
        "a:\n    b: 1\n  c: 2\n",
        "a: [1, 2\n",
        "a: \"open\n",
        "- a\nb: 1\n",
        "a: 1\n- b\n",
        "a:\n- b\n- c\nd: e\n",
        "",
        "\n\n# only\n",
        "---\n---\n",
        "a: 1\n---\n",
        "just a scalar\n",
        "- x\n---\n- y\n",
        "a: |\n\n  after empty\n",
        "a: |-\n\nb: 1\n",
        "a: >\n  folded\n    more\n  back\n",
        "emoji: \"\\u00e9\\U0001F600\"\nutf8: café\n",
        "a: 'unterminated\n",
        "a: b: c\n",
    ];
    for text in snippets {
        assert_same(text);
    }
}
