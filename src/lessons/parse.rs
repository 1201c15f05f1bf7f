//! Reads a lesson's Markdown: the front matter, `##` steps and their fenced blocks
//! (```check, ```solution, ```hint, ```debrief, ```predict, ```run, ```manifest, ```setup). Every mistake is a
//! [`LessonError`] naming the file and line; nothing here panics on any input.

use super::check::parse_check;
use super::model::{Lesson, LessonError, Part, Prediction, Step};
use crate::api::Quantity;
use crate::cluster::ClusterConfig;
use crate::shell::{Command, split_words};
use crate::util::sort::StableSort;

/// The blocks a lesson gives meaning to; any other fenced block is prose.
const BLOCKS: &[&str] = &["check", "solution", "hint", "run", "manifest", "setup", "debrief", "predict"];
/// Programs of the command language.
const PROGRAMS: &[&str] = &["kubectl", "k", "etcdctl", "sim", "sleep", "clear"];

/// Reads one lesson. `file` is the path shown in errors, e.g. `lessons/03-reconcile.md`.
pub fn parse(file: &str, text: &str) -> Result<Lesson, LessonError> {
    let err = |line: usize, message: String| LessonError { file: file.to_string(), line, message };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().collect();
    if lines.first().map(|l| l.trim()) != Some("---") {
        return Err(err(
            1,
            "a lesson starts with front matter: a `---` line, `title: ...`, `summary: ...`, `---`".into(),
        ));
    }
    let Some(close) = lines.iter().skip(1).position(|l| l.trim() == "---").map(|i| i + 1) else {
        return Err(err(1, "the front matter is never closed by a `---` line".into()));
    };
    let id = file.rsplit('/').next().unwrap_or(file).trim_end_matches(".md").to_string();
    let mut lesson = Lesson {
        id,
        file: file.to_string(),
        title: String::new(),
        summary: String::new(),
        track: super::model::DEFAULT_TRACK.to_string(),
        cluster: ClusterConfig::default(),
        setup: Vec::new(),
        intro: Vec::new(),
        steps: Vec::new(),
    };
    front_matter(&lines[1..close], 2, close + 1, &mut lesson).map_err(|(line, m)| err(line, m))?;
    body(&lines, close + 1, &mut lesson).map_err(|(line, m)| err(line, m))?;
    if lesson.steps.is_empty() {
        return Err(err(lines.len().max(1), "the lesson has no steps: start each one with a `## ` heading".into()));
    }
    for step in &lesson.steps {
        if step.checks.is_empty() {
            return Err(err(step.line, format!("step \"{}\" has no ```check block", step.title)));
        }
        if step.solution.is_empty() {
            return Err(err(step.line, format!("step \"{}\" has no ```solution block", step.title)));
        }
    }
    let mut names: Vec<&str> = lesson.files().map(|(n, _)| n).collect();
    names.stable_sort();
    if let Some(pair) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(err(1, format!("two manifests are named \"{}\"", pair[0])));
    }
    Ok(lesson)
}

type Problem = (usize, String);

fn front_matter(lines: &[&str], first: usize, at: usize, lesson: &mut Lesson) -> Result<(), Problem> {
    let mut seen: Vec<String> = Vec::new();
    for (i, raw) in lines.iter().enumerate() {
        let n = first + i;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err((n, format!("front matter lines are `key: value`, not \"{line}\"")));
        };
        let key = key.trim();
        let value = unquote(value.trim());
        if seen.iter().any(|k| k == key) {
            return Err((n, format!("`{key}` is given twice")));
        }
        seen.push(key.to_string());
        let c = &mut lesson.cluster;
        match key {
            "title" => lesson.title = value.to_string(),
            "summary" => lesson.summary = value.to_string(),
            "track" if !value.is_empty() => lesson.track = value.to_string(),
            "seed" => {
                c.seed = value.parse().map_err(|_| (n, format!("seed must be a whole number, not \"{value}\"")))?
            }
            "workers" => match value.parse::<u32>() {
                Ok(w) if (1..=20).contains(&w) => c.workers = w,
                _ => return Err((n, format!("workers must be a number from 1 to 20, not \"{value}\""))),
            },
            "worker-cpu" => c.worker_cpu_milli = quantity(value, n, key)?.milli(),
            "worker-memory" => c.worker_memory_bytes = quantity(value, n, key)?.value(),
            "worker-max-pods" => match value.parse::<i64>() {
                Ok(p) if p > 0 => c.worker_max_pods = p,
                _ => return Err((n, format!("worker-max-pods must be a positive number, not \"{value}\""))),
            },
            "control-planes" => match value.parse::<u32>() {
                Ok(p) if (1..=crate::cluster::control_plane::MAX_CONTROL_PLANES).contains(&p) => c.control_planes = p,
                _ => {
                    let max = crate::cluster::control_plane::MAX_CONTROL_PLANES;
                    return Err((n, format!("control-planes must be a number from 1 to {max}, not \"{value}\"")));
                }
            },
            other => {
                return Err((
                    n,
                    format!(
                        "unknown front matter key `{other}` (known: title, summary, track, seed, workers, worker-cpu, worker-memory, worker-max-pods, control-planes)"
                    ),
                ));
            }
        }
    }
    if lesson.title.is_empty() {
        return Err((at, "the front matter needs a `title:`".into()));
    }
    if lesson.summary.is_empty() {
        return Err((at, "the front matter needs a `summary:`".into()));
    }
    Ok(())
}

fn quantity(value: &str, n: usize, key: &str) -> Result<Quantity, Problem> {
    match Quantity::parse(value) {
        Ok(q) if q.milli() > 0 => Ok(q),
        _ => Err((n, format!("{key} must be a quantity such as 4, 2500m or 8Gi, not \"{value}\""))),
    }
}

fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// Where text and blocks go: the intro, or the step being read.
fn target(lesson: &mut Lesson) -> &mut Vec<Part> {
    match lesson.steps.last_mut() {
        Some(step) => &mut step.body,
        None => &mut lesson.intro,
    }
}

fn flush(text: &mut Vec<&str>, lesson: &mut Lesson) {
    let joined = text.join("\n");
    text.clear();
    let trimmed = joined.trim_matches('\n').trim_end();
    if !trimmed.trim().is_empty() {
        target(lesson).push(Part::Text(trimmed.to_string()));
    }
}

/// Reads everything after the front matter. `start` is the index of its first line.
fn body(lines: &[&str], start: usize, lesson: &mut Lesson) -> Result<(), Problem> {
    let mut text: Vec<&str> = Vec::new();
    let mut i = start;
    while i < lines.len() {
        let line = lines[i];
        let n = i + 1;
        if let Some(title) = line.strip_prefix("## ") {
            flush(&mut text, lesson);
            let title = title.trim().to_string();
            if title.is_empty() {
                return Err((n, "a step heading needs a title after `## `".into()));
            }
            lesson.steps.push(Step {
                title,
                line: n,
                body: Vec::new(),
                hints: Vec::new(),
                checks: Vec::new(),
                solution: Vec::new(),
                debrief: None,
                prediction: None,
            });
            i += 1;
            continue;
        }
        if line == "##" {
            return Err((n, "a step heading needs a title after `## `".into()));
        }
        let ticks = line.chars().take_while(|&c| c == '`').count();
        if ticks < 3 {
            text.push(line);
            i += 1;
            continue;
        }
        let fence = &line[..ticks];
        let info = line[ticks..].trim();
        let Some(end) = lines[i + 1..].iter().position(|l| l.trim_end() == fence).map(|p| i + 1 + p) else {
            return Err((n, format!("this {fence} block is never closed")));
        };
        let inner: Vec<(usize, &str)> = (i + 1..end).map(|j| (j + 1, lines[j])).collect();
        let word = info.split_whitespace().next().unwrap_or("");
        let rest = info[word.len()..].trim();
        if !BLOCKS.contains(&word) {
            if let Some(meant) = BLOCKS.iter().find(|b| near(b, word)) {
                return Err((n, format!("unknown block ```{word}: did you mean ```{meant}?")));
            }
            text.extend_from_slice(&lines[i..=end]);
            i = end + 1;
            continue;
        }
        flush(&mut text, lesson);
        let in_step = !lesson.steps.is_empty();
        match word {
            "check" | "solution" | "hint" | "debrief" | "predict" if !in_step => {
                return Err((n, format!("a ```{word} block belongs in a step, under a `## ` heading")));
            }
            "setup" if in_step => {
                return Err((n, "a ```setup block belongs before the first step".into()));
            }
            "check" => {
                let check = parse_check(rest, n, &inner)?;
                if let Some(step) = lesson.steps.last_mut() {
                    step.checks.push(check);
                }
            }
            "solution" => {
                let commands = commands(&inner, n)?;
                if let Some(step) = lesson.steps.last_mut() {
                    step.solution.extend(commands);
                }
            }
            "hint" => {
                let hint = inner.iter().map(|(_, l)| *l).collect::<Vec<_>>().join("\n").trim().to_string();
                if hint.is_empty() {
                    return Err((n, "this ```hint block is empty".into()));
                }
                if let Some(step) = lesson.steps.last_mut() {
                    step.hints.push(hint);
                }
            }
            "debrief" => {
                let text = inner.iter().map(|(_, l)| *l).collect::<Vec<_>>().join("\n").trim().to_string();
                if text.is_empty() {
                    return Err((n, "this ```debrief block is empty".into()));
                }
                match lesson.steps.last_mut() {
                    Some(step) if step.debrief.is_some() => {
                        return Err((n, format!("step \"{}\" has two ```debrief blocks", step.title)));
                    }
                    Some(step) => step.debrief = Some(text),
                    None => {}
                }
            }
            "predict" => {
                let prediction = parse_prediction(rest, n, &inner)?;
                match lesson.steps.last_mut() {
                    Some(step) if step.prediction.is_some() => {
                        return Err((n, format!("step \"{}\" has two ```predict blocks", step.title)));
                    }
                    Some(step) => step.prediction = Some(prediction),
                    None => {}
                }
            }
            "setup" => lesson.setup.extend(commands(&inner, n)?),
            "run" => {
                let commands = commands(&inner, n)?;
                target(lesson).push(Part::Commands(commands));
            }
            _ => {
                let mut yaml = inner.iter().map(|(_, l)| *l).collect::<Vec<_>>().join("\n");
                yaml.push('\n');
                let name = (!rest.is_empty()).then(|| rest.to_string());
                let source = name.clone().unwrap_or_else(|| "manifest".into());
                match crate::kubectl::manifest::parse(&yaml, &source) {
                    Ok(docs) if !docs.is_empty() => {}
                    Ok(_) => return Err((n, "this ```manifest block holds no object".into())),
                    Err(e) => return Err((n, format!("this manifest does not parse: {}", e.trim()))),
                }
                target(lesson).push(Part::Manifest { name, text: yaml });
            }
        }
        i = end + 1;
    }
    flush(&mut text, lesson);
    Ok(())
}

/// Reads a ```predict block: the question after `predict`, then `choices: a | b | c`
/// (optional), `answer: COMMAND` (a command that only looks) and `why: PATTERN` (optional).
fn parse_prediction(question: &str, open: usize, lines: &[(usize, &str)]) -> Result<Prediction, Problem> {
    if question.is_empty() {
        return Err((open, "a ```predict block asks a question: write it after `predict`".into()));
    }
    let mut prediction = Prediction {
        question: question.to_string(),
        choices: Vec::new(),
        answer: String::new(),
        why: None,
        line: open,
    };
    for &(n, raw) in lines {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(list) = line.strip_prefix("choices:") {
            prediction.choices = list.split('|').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect();
            if prediction.choices.len() < 2 {
                return Err((n, "`choices:` offers at least two answers, separated by `|`".into()));
            }
        } else if let Some(command) = line.strip_prefix("answer:") {
            let command = command.trim();
            if let Some(problem) = super::check::read_only_problem(command) {
                return Err((n, problem));
            }
            prediction.answer = command.to_string();
        } else if let Some(pattern) = line.strip_prefix("why:") {
            prediction.why = Some(super::check::parse_pattern(pattern.trim()).map_err(|e| (n, e))?);
        } else {
            return Err((n, format!("a ```predict block's lines are choices:, answer: or why:; not \"{line}\"")));
        }
    }
    if prediction.answer.is_empty() {
        return Err((open, "a ```predict block needs an `answer:` command that prints the answer".into()));
    }
    Ok(prediction)
}

/// Whether `word` is one letter away from a block's name (a typo such as ```checks).
fn near(block: &str, word: &str) -> bool {
    if word.is_empty() || word == block {
        return false;
    }
    let (a, b): (Vec<char>, Vec<char>) = (block.chars().collect(), word.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()] <= 1 && block.len() > 3
}

/// A block of commands, one per line, heredocs attached, each checked for what the command
/// language can run.
pub(super) fn commands(lines: &[(usize, &str)], open: usize) -> Result<Vec<Command>, Problem> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (n, raw) = lines[i];
        i += 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("$ ").unwrap_or(line);
        let words = split_words(line).map_err(|e| (n, format!("this command does not parse: {e}")))?;
        let program = words.first().map(String::as_str).unwrap_or("");
        // A node shell's programs (`sim ssh NODE`, then `systemctl …`) are commands too.
        if !PROGRAMS.contains(&program) && !crate::shell::node::PROGRAMS.contains(&program) {
            return Err((n, format!("`{program}` is not a command of the sandbox (kubectl, etcdctl, sim, sleep)")));
        }
        let mut command = Command::new(line);
        if let Some(pos) = line.find("<<") {
            let word = line[pos + 2..].trim_start_matches('-').trim().trim_matches(|c| c == '\'' || c == '"');
            let word = word.split_whitespace().next().unwrap_or("").to_string();
            if word.is_empty() {
                return Err((n, "a heredoc needs a terminator word, e.g. <<EOF".into()));
            }
            let mut body = String::new();
            let mut closed = false;
            while i < lines.len() {
                let (_, l) = lines[i];
                i += 1;
                if l.trim_end() == word {
                    closed = true;
                    break;
                }
                body.push_str(l);
                body.push('\n');
            }
            if !closed {
                return Err((n, format!("this heredoc is never closed by a `{word}` line")));
            }
            command.heredoc = Some((word, body));
        }
        out.push(command);
    }
    if out.is_empty() {
        return Err((open, "this block holds no command".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lessons::model::Test;

    const LESSON: &str = "---
title: \"A: title\"
summary: S
workers: 2
worker-cpu: 2500m
worker-memory: 4Gi
---
Intro text.

```setup
kubectl create namespace demo
```

## First

Some text.

```yaml
kind: NotALessonBlock
```

```manifest web.yaml
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: c
    image: nginx:1.25
```

```run
kubectl apply -f web.yaml
```

```hint
Look closer.
```

```check
run: kubectl get pods
expect:
NAME   READY
web    1/1
```

```solution
kubectl apply -f - <<EOF
kind: Pod
EOF
sleep 5s
```
";

    #[test]
    fn a_lesson_reads_into_front_matter_intro_and_steps() {
        let lesson = parse("lessons/01-x.md", LESSON).unwrap();
        assert_eq!(lesson.id, "01-x");
        assert_eq!(lesson.title, "A: title");
        assert_eq!(
            (lesson.cluster.workers, lesson.cluster.worker_cpu_milli, lesson.cluster.worker_memory_bytes),
            (2, 2500, 4 << 30)
        );
        assert_eq!(lesson.setup.len(), 1);
        assert_eq!(lesson.intro, vec![Part::Text("Intro text.".into())]);
        let step = &lesson.steps[0];
        assert_eq!((step.title.as_str(), step.line), ("First", 14));
        assert!(matches!(&step.body[0], Part::Text(t) if t.contains("kind: NotALessonBlock")));
        assert!(matches!(&step.body[1], Part::Manifest { name: Some(n), .. } if n == "web.yaml"));
        assert!(matches!(&step.body[2], Part::Commands(c) if c.len() == 1));
        assert_eq!(step.hints, ["Look closer."]);
        assert_eq!(step.checks[0].label, "kubectl get pods");
        assert!(matches!(&step.checks[0].test, Test::Command { expect, .. }
            if expect == &[crate::lessons::Expect::Equals("NAME   READY\nweb    1/1".into())]));
        assert_eq!(step.solution.len(), 2);
        assert_eq!(step.solution[0].heredoc, Some(("EOF".into(), "kind: Pod\n".into())));
        assert_eq!(lesson.files().count(), 1);
    }

    #[test]
    fn arbitrary_text_never_panics_the_parser() {
        let mut rng = crate::sim::Rng::stream(7, "lesson fuzz");
        let pieces = [
            "---\n",
            "title: t\n",
            "summary: s\n",
            "## S\n",
            "```check\n",
            "```\n",
            "run: kubectl get pods\n",
            "expect:\n",
            "record: by=\n",
            "```solution\n",
            "<<EOF\n",
            "```manifest a\n",
            "kind: Pod\n",
            "\u{e9}\n",
            "`````\n",
        ];
        for _ in 0..2000 {
            let n = (rng.next_u64() % 14) as usize;
            let text: String = (0..n).map(|_| pieces[(rng.next_u64() % pieces.len() as u64) as usize]).collect();
            let _ = parse("lessons/fuzz.md", &text);
        }
    }
}
