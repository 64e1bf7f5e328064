//! Matching recorded values that hold placeholders (`$SESSION_ID`,
//! `$TOOL_USE_ID_2`, ...) against what dsh produced.
//!
//! A placeholder binds to whatever it first meets; every later occurrence
//! must then be that same text, and two distinct placeholders must never
//! bind the same text (the vectors give a second distinct value `_2`).
//! Only names the vector lists under `placeholders` are placeholders:
//! anything else starting with `$` is literal text.

use std::collections::BTreeMap;

use serde_json::Value;

/// Placeholder bindings of one vector run.
#[derive(Debug, Default)]
pub struct Bindings {
    names: Vec<String>,
    bound: BTreeMap<String, String>,
}

enum Piece {
    Literal(String),
    Hole(String),
}

impl Bindings {
    /// Bindings for the placeholder names a vector declares.
    pub fn new(vector: &Value) -> Bindings {
        let mut names: Vec<String> = vector["placeholders"]
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        // `_2` variants are declared implicitly by their base name (up to
        // `_99`: S80 has 18 tool calls).
        let extra: Vec<String> = names
            .iter()
            .flat_map(|n| (2..=99).map(move |i| format!("{n}_{i}")))
            .collect();
        names.extend(extra);
        // Greedy: the longest name that matches wins.
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        Bindings {
            names,
            bound: BTreeMap::new(),
        }
    }

    fn pieces(&self, pattern: &str) -> Vec<Piece> {
        let mut out = Vec::new();
        let mut lit = String::new();
        let mut rest = pattern;
        'scan: while let Some(pos) = rest.find('$') {
            lit.push_str(&rest[..pos]);
            let tail = &rest[pos..];
            for name in &self.names {
                let after = tail.get(name.len()..).and_then(|s| s.chars().next());
                let boundary = after
                    .is_none_or(|c| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'));
                if tail.starts_with(name.as_str()) && boundary {
                    if !lit.is_empty() {
                        out.push(Piece::Literal(std::mem::take(&mut lit)));
                    }
                    out.push(Piece::Hole(name.clone()));
                    rest = &tail[name.len()..];
                    continue 'scan;
                }
            }
            lit.push('$');
            rest = &tail[1..];
        }
        lit.push_str(rest);
        if !lit.is_empty() {
            out.push(Piece::Literal(lit));
        }
        out
    }

    /// Whether `actual` is `pattern` with its placeholders bound
    /// consistently; new bindings are kept only when it is.
    pub fn match_str(&mut self, pattern: &str, actual: &str) -> bool {
        let mut re = String::from("^");
        let mut holes = Vec::new();
        for piece in self.pieces(pattern) {
            match piece {
                Piece::Literal(l) => re.push_str(&regex::escape(&l)),
                Piece::Hole(name) => match self.bound.get(&name) {
                    Some(v) => re.push_str(&regex::escape(v)),
                    // A second use within one string gets its own group;
                    // the groups must then agree (checked below).
                    None => {
                        re.push_str("(.+?)");
                        holes.push(name);
                    }
                },
            }
        }
        re.push('$');
        let Ok(re) = regex::Regex::new(&re) else {
            return false;
        };
        let Some(caps) = re.captures(actual) else {
            return false;
        };
        let mut new: BTreeMap<String, String> = BTreeMap::new();
        for (i, name) in holes.iter().enumerate() {
            let v = caps.get(i + 1).map_or("", |m| m.as_str()).to_string();
            if let Some(prev) = new.get(name)
                && *prev != v
            {
                return false;
            }
            new.insert(name.clone(), v);
        }
        // Distinct placeholders stand for distinct values.
        for (name, v) in &new {
            if self
                .bound
                .iter()
                .chain(new.iter())
                .any(|(n, b)| n != name && b == v)
            {
                return false;
            }
        }
        self.bound.extend(new);
        true
    }

    /// Compares a recorded JSON value with an actual one: same keys in the
    /// same order, same types, strings matched with placeholders. Keys in
    /// `type_only` are compared by type alone. Returns the first difference.
    pub fn match_value(
        &mut self,
        path: &str,
        want: &Value,
        got: &Value,
        type_only: &[&str],
    ) -> Result<(), String> {
        match (want, got) {
            (Value::String(w), Value::String(g)) => {
                if self.match_str(w, g) {
                    Ok(())
                } else {
                    Err(format!("{path}: want {w:?} got {g:?}"))
                }
            }
            (Value::Object(w), Value::Object(g)) => {
                let wk: Vec<&String> = w.keys().collect();
                let gk: Vec<&String> = g.keys().collect();
                if wk != gk {
                    return Err(format!("{path}: keys want {wk:?} got {gk:?}"));
                }
                for (k, wv) in w {
                    let p = format!("{path}.{k}");
                    if type_only.contains(&k.as_str()) {
                        if std::mem::discriminant(wv) != std::mem::discriminant(&g[k]) {
                            return Err(format!("{p}: want a value like {wv} got {}", g[k]));
                        }
                        continue;
                    }
                    self.match_value(&p, wv, &g[k], type_only)?;
                }
                Ok(())
            }
            (Value::Array(w), Value::Array(g)) => {
                if w.len() != g.len() {
                    return Err(format!("{path}: want {} items got {}", w.len(), g.len()));
                }
                for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                    self.match_value(&format!("{path}[{i}]"), wv, gv, type_only)?;
                }
                Ok(())
            }
            (w, g) if w == g => Ok(()),
            (w, g) => Err(format!("{path}: want {w} got {g}")),
        }
    }
}

#[test]
fn placeholders_bind_consistently_and_distinctly() {
    let v = serde_json::json!({"placeholders": {"$SESSION_ID": "", "$TOOL_USE_ID": ""}});
    let mut b = Bindings::new(&v);
    assert!(b.match_str("$SESSION_ID", "ses_1"));
    assert!(b.match_str("/x/$SESSION_ID.jsonl", "/x/ses_1.jsonl"));
    assert!(!b.match_str("$SESSION_ID", "ses_2"));
    assert!(b.match_str("$TOOL_USE_ID", "call_1"));
    assert!(
        !b.match_str("$TOOL_USE_ID_2", "call_1"),
        "distinct names, distinct values"
    );
    assert!(b.match_str("$TOOL_USE_ID_2", "call_2"));
    assert!(b.match_str("${CLAUDE_PROJECT_DIR} $HOME", "${CLAUDE_PROJECT_DIR} $HOME"));
}
