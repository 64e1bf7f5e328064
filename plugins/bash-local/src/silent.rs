//! Claude Code's guess that a `Bash` command prints nothing on success:
//! the `noOutputExpected` of its `tool_response`.
//!
//! Claude Code 2.1.197 splits the command line into its simple commands
//! (a bash parse: `&&`, `||`, `;`, `|`, `|&`, `&` and newlines separate
//! them, comments and redirections drop out, a subshell, group or compound
//! statement stays one piece with its own text) and says `true` when there
//! is at least one and every one starts with `mv`, `cp`, `rm`, `mkdir`,
//! `rmdir`, `chmod`, `chown`, `chgrp`, `touch`, `ln`, `cd`, `export`,
//! `unset` or `wait` (recorded: vector `S80-no-output-expected`, 18
//! commands; `FOO=1 touch x`, `touch x | cat`, `(touch x)` and `true` are
//! `false`). A line longer than 10,000 characters is one piece, as there.
//!
//! The split here is a quote-, escape- and nesting-aware scan rather than a
//! full bash grammar: a piece that opens a compound statement (`if`,
//! `while`, `{`, `(`) fails the test on its first word whatever follows,
//! which is the answer the full parse gives. A line the scan cannot split
//! (an unclosed quote or bracket) is judged whole, by its first word.

/// The commands Claude Code expects to be silent.
const SILENT: &[&str] = &[
    "mv", "cp", "rm", "mkdir", "rmdir", "chmod", "chown", "chgrp", "touch", "ln", "cd", "export",
    "unset", "wait",
];

/// Past this many characters Claude Code does not parse the line.
const MAX_PARSED: usize = 10_000;

/// Whether Claude Code would mark `command` `noOutputExpected`.
pub fn no_output_expected(command: &str) -> bool {
    let pieces = simple_commands(command);
    !pieces.is_empty()
        && pieces.iter().all(|p| {
            p.split_whitespace()
                .next()
                .is_some_and(|first| SILENT.contains(&first))
        })
}

/// The simple commands of `command`, trimmed, empty ones dropped.
fn simple_commands(command: &str) -> Vec<String> {
    if command.is_empty() {
        return Vec::new();
    }
    if command.chars().count() > MAX_PARSED {
        return vec![command.to_string()];
    }
    split(command).unwrap_or_else(|| vec![command.to_string()])
}

/// The scan; `None` when the line does not parse (an unclosed quote or
/// bracket).
fn split(command: &str) -> Option<Vec<String>> {
    let chars: Vec<char> = command.chars().collect();
    let mut pieces = Vec::new();
    let mut current = String::new();
    // Open `(`, `{`, `$(`, `${` and backquotes, innermost last.
    let mut nesting: Vec<char> = Vec::new();
    let mut i = 0;
    let flush = |current: &mut String, pieces: &mut Vec<String>| {
        let piece = current.trim();
        if !piece.is_empty() {
            pieces.push(piece.to_string());
        }
        current.clear();
    };
    while i < chars.len() {
        let c = chars[i];
        let prev = current.chars().last();
        let at_word_start =
            prev.is_none_or(|p| p.is_whitespace() || matches!(p, ';' | '&' | '|' | '(' | ')'));
        match c {
            '\\' => {
                current.push(c);
                if let Some(&next) = chars.get(i + 1) {
                    current.push(next);
                    i += 1;
                }
            }
            '\'' => {
                let end = (i + 1..chars.len()).find(|&j| chars[j] == '\'')?;
                current.extend(&chars[i..=end]);
                i = end;
            }
            '"' => {
                let mut j = i + 1;
                loop {
                    match chars.get(j) {
                        None => return None,
                        Some('\\') => j += 2,
                        Some('"') => break,
                        Some(_) => j += 1,
                    }
                }
                current.extend(&chars[i..=j]);
                i = j;
            }
            '`' => {
                if nesting.last() == Some(&'`') {
                    nesting.pop();
                } else {
                    nesting.push('`');
                }
                current.push(c);
            }
            '#' if at_word_start && nesting.is_empty() => {
                // A comment runs to the end of the line.
                while i + 1 < chars.len() && chars[i + 1] != '\n' {
                    i += 1;
                }
            }
            '(' => {
                nesting.push('(');
                current.push(c);
            }
            '{' if at_word_start || prev == Some('$') => {
                nesting.push('{');
                current.push(c);
            }
            ')' => {
                if nesting.pop() != Some('(') {
                    return None;
                }
                current.push(c);
            }
            '}' if nesting.last() == Some(&'{') => {
                nesting.pop();
                current.push(c);
            }
            '\n' | ';' if nesting.is_empty() => flush(&mut current, &mut pieces),
            '|' if nesting.is_empty() => {
                // `|`, `||`, `|&`.
                if matches!(chars.get(i + 1), Some('|' | '&')) {
                    i += 1;
                }
                flush(&mut current, &mut pieces);
            }
            '&' if nesting.is_empty() => {
                let redirect = matches!(prev, Some('>' | '<')) || chars.get(i + 1) == Some(&'>');
                if redirect {
                    current.push(c);
                } else {
                    if chars.get(i + 1) == Some(&'&') {
                        i += 1;
                    }
                    flush(&mut current, &mut pieces);
                }
            }
            _ => current.push(c),
        }
        i += 1;
    }
    if !nesting.is_empty() {
        return None;
    }
    flush(&mut current, &mut pieces);
    Some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command of vector `S80-no-output-expected`, with what Claude
    /// Code 2.1.197 said.
    #[test]
    fn claude_codes_recorded_answers() {
        let cases = [
            ("touch a1; mkdir -p d1", true),
            ("touch a2 | cat", false),
            ("FOO=1 touch a3", false),
            ("touch a4 > /dev/null 2>&1", true),
            ("export MARK_A=1", true),
            ("(touch a5)", false),
            ("touch a6 # a comment", true),
            ("chmod 644 a1 && ln -sf a1 l1 && cp a1 a7 && mv a7 a8", true),
            ("true", false),
            ("wait", true),
            ("touch a9\ntouch a10", true),
            ("if true; then touch a11; fi", false),
            ("  rm -f a9  ", true),
            ("unset MARK_B; rmdir d1", true),
            ("cd sub", true),
            ("{ touch a12; }", false),
            ("touch 'a b' \"c d\"", true),
            ("echo hi >> a1", false),
            // And the S35 permission runs.
            ("touch made_by_bash.txt", true),
            ("mkdir made_dir", true),
            ("rm -f nothing_here.txt", true),
            ("touch made_by_bash.txt && echo hi", false),
            ("cd sub && pwd", false),
        ];
        for (command, want) in cases {
            assert_eq!(no_output_expected(command), want, "{command:?}");
        }
    }

    #[test]
    fn quotes_and_nesting_hold_separators() {
        assert_eq!(
            simple_commands("touch 'a;b' \"c|d\""),
            vec!["touch 'a;b' \"c|d\""]
        );
        assert_eq!(simple_commands("rm $(ls; pwd) x"), vec!["rm $(ls; pwd) x"]);
        assert_eq!(
            simple_commands("touch a &>/dev/null & wait"),
            vec!["touch a &>/dev/null", "wait"]
        );
        assert_eq!(simple_commands("# only a comment"), Vec::<String>::new());
        assert!(!no_output_expected(""));
        assert!(!no_output_expected("# only a comment"));
        // Unparsable: one piece, judged by its first word.
        assert_eq!(simple_commands("touch 'a"), vec!["touch 'a"]);
        assert!(no_output_expected("touch 'a"));
        let long = format!("touch a; echo {}", "x".repeat(MAX_PARSED));
        assert!(no_output_expected(&long));
    }
}
