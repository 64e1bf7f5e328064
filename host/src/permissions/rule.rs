//! One permission rule in Claude Code's syntax, and the merged set of every
//! layer's rules.
//!
//! A rule is `Tool` (every call of the tool) or `Tool(specifier)`:
//! - `Bash(git diff:*)`: the command is `git diff` or starts with
//!   `git diff `; `Bash(npm run test *)`: a wildcard over the whole command
//!   (a ` *` tail also matches the bare `npm run test`); anything else is the
//!   exact command. A command made of several (`a && b`, `a | b`, `a; b`)
//!   is denied or asked about when any part matches, and allowed only when
//!   every part is allowed.
//! - `Read(path)` / `Edit(path)`: a gitignore-style path pattern (`**`,
//!   `*`, `?`): `//abs` is absolute, `~/x` is under the home folder, `/x` is
//!   under the session's project folder, `./x` and `x` are under its current
//!   folder. `Edit` rules cover every tool that edits files (`Edit`,
//!   `Write`, `MultiEdit`, `NotebookEdit`); `Read` rules cover `Read`,
//!   `Glob`, `Grep` and `LS`. A `Write(path)` rule matches nothing: Claude
//!   Code 2.1.197 did not apply `Write(/docs/**)` to a Write under `docs/`
//!   (recorded, S31 `edit_allow_glob_trusted`).
//! - `WebFetch(domain:example.com)`: the URL's host (`*.example.com` for
//!   its subdomains).
//! - `mcp__server` (or `mcp__server__*`): every tool of that MCP server.
//! - `Task` and `Agent` name the same tool.

use std::path::{Component, Path, PathBuf};

use regex::Regex;
use serde_json::Value;

use super::bash;

/// What a rule says about the calls it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Behavior {
    /// Run without asking.
    Allow,
    /// Ask first.
    Ask,
    /// Refuse.
    Deny,
}

impl Behavior {
    /// The list's name (`allow`, `ask`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            Behavior::Allow => "allow",
            Behavior::Ask => "ask",
            Behavior::Deny => "deny",
        }
    }
}

/// Where a layer of rules comes from, most authoritative first. Claude Code
/// merges every layer: any matching `deny` wins, then any `ask`, then any
/// `allow`, whichever layer holds it; the source is kept to say which rule
/// decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleSource {
    /// Managed settings (`/etc/claude-code/managed-settings.json`).
    Managed,
    /// Command-line flags (`dsh prompt --allowedTools/--disallowedTools`).
    Cli,
    /// `<project>/.claude/settings.local.json`.
    Local,
    /// `<project>/.claude/settings.json`.
    Project,
    /// `~/.claude/settings.json`.
    User,
    /// The manifest's `permissions:` block.
    Manifest,
    /// Answers given in this session ("allow always").
    Session,
    /// A skill's `allowed-tools`, for the rest of the turn that ran it
    /// (Claude Code's `command` rules).
    Command,
}

impl RuleSource {
    /// The source's name, as `dsh sessions show` and denials print it.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleSource::Managed => "managed",
            RuleSource::Cli => "cli",
            RuleSource::Local => "local",
            RuleSource::Project => "project",
            RuleSource::User => "user",
            RuleSource::Manifest => "manifest",
            RuleSource::Session => "session",
            RuleSource::Command => "command",
        }
    }
}

/// One source's rule lists, as text (the shape settings files and the
/// manifest hold them in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleLayer {
    /// Where the rules come from.
    pub source: RuleSource,
    /// Calls that run without asking.
    pub allow: Vec<String>,
    /// Calls to ask about.
    pub ask: Vec<String>,
    /// Calls to refuse.
    pub deny: Vec<String>,
}

impl RuleLayer {
    /// An empty layer.
    pub fn new(source: RuleSource) -> Self {
        RuleLayer {
            source,
            allow: Vec::new(),
            ask: Vec::new(),
            deny: Vec::new(),
        }
    }
}

/// A rule that does not parse, naming its layer, list and position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("permission rule `{rule}` ({source_name} {list}[{index}]): {message}")]
pub struct RuleError {
    /// The layer's source name.
    pub source_name: &'static str,
    /// `allow`, `ask` or `deny`.
    pub list: &'static str,
    /// Position in the list.
    pub index: usize,
    /// The rule as written.
    pub rule: String,
    /// What is wrong.
    pub message: String,
}

#[derive(Debug, Clone)]
enum Spec {
    /// Every call of the tool.
    Any,
    /// A Bash command pattern.
    Command(Regex),
    /// A path pattern of a `Read` or `Edit` rule (the text after the
    /// anchor; resolved per call).
    Path(String),
    /// A `WebFetch` domain (`*.x` for subdomains).
    Domain(String),
    /// A specifier this tool has no meaning for: matches nothing.
    Inert,
}

/// One parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    tool: String,
    spec: Spec,
}

/// What a rule is matched against.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// Its arguments.
    pub args: &'a Value,
    /// The session's current folder.
    pub cwd: &'a Path,
    /// The session's project folder (where it started).
    pub project: &'a Path,
    /// The home folder, if known.
    pub home: Option<&'a Path>,
}

/// Tools whose path argument `Edit(...)` rules judge.
pub(crate) const EDIT_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];
/// Tools whose path argument `Read(...)` rules judge.
pub(crate) const READ_TOOLS: [&str; 4] = ["Read", "Glob", "Grep", "LS"];

fn canonical_tool(name: &str) -> &str {
    match name {
        "Task" => "Agent",
        other => other,
    }
}

impl Rule {
    /// Parses `Tool` or `Tool(specifier)`.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let trimmed = text.trim();
        let (tool, spec) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err("a specifier must end with `)`".into());
                };
                (&trimmed[..open], Some(inner))
            }
        };
        if tool.is_empty()
            || !tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*')
        {
            return Err(format!(
                "`{tool}` is not a tool name (letters, digits, `_`, `-`)"
            ));
        }
        let tool = tool.trim_end_matches("__*").to_string();
        let spec = match spec {
            None | Some("*") => Spec::Any,
            Some(s) if s.trim().is_empty() => {
                return Err("an empty specifier: write the bare tool name instead".into());
            }
            Some(s) => match canonical_tool(&tool) {
                "Bash" => Spec::Command(command_pattern(s)?),
                "Read" | "Edit" => Spec::Path(s.to_string()),
                "WebFetch" => match s.strip_prefix("domain:") {
                    Some(d) if !d.is_empty() => Spec::Domain(d.to_ascii_lowercase()),
                    _ => return Err("a WebFetch rule takes `domain:<host>`".into()),
                },
                _ => Spec::Inert,
            },
        };
        Ok(Rule {
            text: trimmed.to_string(),
            tool,
            spec,
        })
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn names_tool(&self, tool: &str) -> bool {
        let rule = canonical_tool(&self.tool);
        let tool = canonical_tool(tool);
        if rule == tool {
            return true;
        }
        if rule.starts_with("mcp__") && rule.matches("__").count() == 1 {
            return tool.starts_with(&format!("{rule}__"));
        }
        match (rule, &self.spec) {
            // An `Edit(path)` rule judges every edit tool's path; a bare
            // `Edit` names the Edit tool only.
            ("Edit", Spec::Path(_)) => EDIT_TOOLS.contains(&tool),
            ("Read", Spec::Path(_)) => READ_TOOLS.contains(&tool),
            _ => false,
        }
    }

    /// Whether this rule matches `call`, looking at one Bash sub-command
    /// (`part`) when the call is a command.
    fn matches_part(&self, call: &Call<'_>, part: Option<&str>) -> bool {
        if !self.names_tool(call.tool) {
            return false;
        }
        match &self.spec {
            Spec::Any => true,
            Spec::Inert => false,
            Spec::Command(re) => part.is_some_and(|p| re.is_match(p)),
            Spec::Path(pattern) => target_path(call).is_some_and(|target| {
                path_pattern(pattern, call)
                    .is_some_and(|re| ancestors_or_self(&target).any(|p| re.is_match(&p)))
            }),
            Spec::Domain(domain) => call
                .args
                .get("url")
                .and_then(Value::as_str)
                .and_then(url_host)
                .is_some_and(|host| match domain.strip_prefix("*.") {
                    Some(base) => host.ends_with(&format!(".{base}")) || host == base,
                    None => host == *domain,
                }),
        }
    }
}

/// `Bash(...)` specifier → a regex over one sub-command.
fn command_pattern(spec: &str) -> Result<Regex, String> {
    let source = if let Some(prefix) = spec.strip_suffix(":*") {
        format!("^{}(?:\\s.*)?$", regex::escape(prefix.trim_end()))
    } else if spec.contains('*') {
        let (body, tail) = match spec.strip_suffix(" *") {
            Some(body) => (body, "(?:\\s.*)?"),
            None => (spec, ""),
        };
        let escaped: Vec<String> = body.split('*').map(regex::escape).collect();
        format!("^{}{tail}$", escaped.join(".*"))
    } else {
        format!("^{}$", regex::escape(spec.trim()))
    };
    Regex::new(&format!("(?s){source}")).map_err(|e| format!("not a usable pattern: {e}"))
}

/// The path a file tool's call is about, absolute and without `.`/`..`.
pub(crate) fn target_path(call: &Call<'_>) -> Option<PathBuf> {
    let raw = ["file_path", "notebook_path", "path"]
        .iter()
        .find_map(|k| call.args.get(*k).and_then(Value::as_str));
    match raw {
        Some(raw) => Some(normalize(&call.cwd.join(raw))),
        // A search without a `path` reads the cwd (Claude Code's `getPath`).
        None if matches!(call.tool, "Glob" | "Grep" | "LS") => Some(normalize(call.cwd)),
        None => None,
    }
}

/// Lexically resolves `.` and `..` (the file may not exist yet).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn ancestors_or_self(path: &Path) -> impl Iterator<Item = String> + '_ {
    path.ancestors()
        .filter(|p| !p.as_os_str().is_empty())
        .map(|p| p.to_string_lossy().into_owned())
}

/// A path pattern anchored as Claude Code anchors it, as a regex over
/// absolute paths.
fn path_pattern(pattern: &str, call: &Call<'_>) -> Option<Regex> {
    let anchored: String = if let Some(abs) = pattern.strip_prefix("//") {
        format!("/{abs}")
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        format!("{}/{rest}", call.home?.to_string_lossy())
    } else if let Some(rest) = pattern.strip_prefix('/') {
        format!("{}/{rest}", call.project.to_string_lossy())
    } else {
        let rest = pattern.strip_prefix("./").unwrap_or(pattern);
        format!("{}/{rest}", call.cwd.to_string_lossy())
    };
    // Claude Code drops a trailing `/**` (when something is left), so
    // `dir/**` covers the folder itself as well as what it holds (S291).
    let anchored = match anchored.strip_suffix("/**") {
        Some(dir) if dir.contains(|c| c != '/') => dir.to_string(),
        _ => anchored,
    };
    let mut re = String::from("(?s)^");
    let mut chars = anchored.trim_end_matches('/').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                if chars.peek() == Some(&'/') {
                    chars.next();
                    re.push_str("(?:.*/)?");
                } else {
                    re.push_str(".*");
                }
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    Regex::new(&re).ok()
}

fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// A session's `Read(path)` deny rules, compiled ([`RuleSet::read_denies`]).
pub(crate) struct ReadDenies(Vec<Regex>);

impl ReadDenies {
    /// Whether a rule covers `path` (absolute) or a folder above it.
    pub(crate) fn covers(&self, path: &Path) -> bool {
        !self.0.is_empty()
            && ancestors_or_self(&normalize(path)).any(|p| self.0.iter().any(|re| re.is_match(&p)))
    }
}

/// Every layer's rules, parsed, with their behavior and source.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<(Behavior, RuleSource, Rule)>,
}

/// A rule that decided a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    /// The rule as written.
    pub rule: String,
    /// Its layer.
    pub source: RuleSource,
    /// Whether it names the tool alone (`Write`, `Bash(*)`): no command,
    /// path or domain.
    pub whole_tool: bool,
}

impl RuleSet {
    /// Parses every layer; the first rule that does not parse is an error
    /// naming it.
    pub fn from_layers(layers: &[RuleLayer]) -> Result<RuleSet, RuleError> {
        let mut set = RuleSet::default();
        for layer in layers {
            set.add_layer(layer)?;
        }
        Ok(set)
    }

    /// Adds one layer's rules.
    pub fn add_layer(&mut self, layer: &RuleLayer) -> Result<(), RuleError> {
        for (behavior, list) in [
            (Behavior::Deny, &layer.deny),
            (Behavior::Ask, &layer.ask),
            (Behavior::Allow, &layer.allow),
        ] {
            for (index, text) in list.iter().enumerate() {
                let rule = Rule::parse(text).map_err(|message| RuleError {
                    source_name: layer.source.as_str(),
                    list: behavior.as_str(),
                    index,
                    rule: text.clone(),
                    message,
                })?;
                self.rules.push((behavior, layer.source, rule));
            }
        }
        Ok(())
    }

    /// Adds one parsed rule (a session's "allow always").
    pub fn push(&mut self, behavior: Behavior, source: RuleSource, rule: Rule) {
        self.rules.push((behavior, source, rule));
    }

    /// Drops every rule of `source`.
    pub fn remove_source(&mut self, source: RuleSource) {
        self.rules.retain(|(_, s, _)| *s != source);
    }

    /// Every rule, in the order added: `(behavior, source, text)`.
    pub fn list(&self) -> impl Iterator<Item = (Behavior, RuleSource, &str)> {
        self.rules.iter().map(|(b, s, r)| (*b, *s, r.text()))
    }

    /// The `<kind>(path)` rule of this behavior (`kind`: `Read` or
    /// `Edit`) that matches `call`'s path: the rules Claude Code's file
    /// tools check while validating their input.
    pub fn path_rule_matching(
        &self,
        kind: &str,
        behavior: Behavior,
        call: &Call<'_>,
    ) -> Option<Matched> {
        self.rules
            .iter()
            .filter(|(b, _, r)| {
                *b == behavior && canonical_tool(&r.tool) == kind && matches!(r.spec, Spec::Path(_))
            })
            .find(|(_, _, r)| r.matches_part(call, None))
            .map(|(_, source, rule)| Matched {
                rule: rule.text().to_string(),
                source: *source,
                whole_tool: matches!(rule.spec, Spec::Any),
            })
    }

    /// The `Read(path)` deny rules compiled once for a session's folders
    /// (what `Glob` and `Grep` leave out: [`ReadDenies::covers`]), as
    /// [`RuleSet::path_rule_matching`] would match them one path at a time.
    pub(crate) fn read_denies(
        &self,
        cwd: &Path,
        project: &Path,
        home: Option<&Path>,
    ) -> ReadDenies {
        let call = Call {
            tool: "Read",
            args: &Value::Null,
            cwd,
            project,
            home,
        };
        ReadDenies(
            self.rules
                .iter()
                .filter(|(b, _, r)| *b == Behavior::Deny && canonical_tool(&r.tool) == "Read")
                .filter_map(|(_, _, r)| match &r.spec {
                    Spec::Path(pattern) => path_pattern(pattern, &call),
                    _ => None,
                })
                .collect(),
        )
    }

    /// The rule of this behavior that matches `call`. Deny and ask rules
    /// match a command when any part does; an allow needs every part of a
    /// command allowed (each by some rule), and answers with the first.
    pub fn matching(&self, behavior: Behavior, call: &Call<'_>) -> Option<Matched> {
        let of_kind = || self.rules.iter().filter(move |(b, _, _)| *b == behavior);
        let hit = |(_, source, rule): &(Behavior, RuleSource, Rule)| Matched {
            rule: rule.text().to_string(),
            source: *source,
            whole_tool: matches!(rule.spec, Spec::Any),
        };
        let parts = command_parts(call);
        match (&parts, behavior) {
            (None, _) => of_kind()
                .find(|(_, _, r)| r.matches_part(call, None))
                .map(hit),
            (Some(parts), Behavior::Allow) => {
                let mut first = None;
                for part in parts {
                    let found = of_kind().find(|(_, _, r)| r.matches_part(call, Some(part)))?;
                    first.get_or_insert_with(|| hit(found));
                }
                first
            }
            (Some(parts), _) => parts.iter().find_map(|part| {
                of_kind()
                    .find(|(_, _, r)| r.matches_part(call, Some(part)))
                    .map(hit)
            }),
        }
    }
}

/// A Bash call's sub-commands (`None` for other tools).
fn command_parts(call: &Call<'_>) -> Option<Vec<String>> {
    if canonical_tool(call.tool) != "Bash" {
        return None;
    }
    let command = call
        .args
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or("");
    let parts = bash::split(command);
    Some(if parts.is_empty() {
        vec![command.trim().to_string()]
    } else {
        parts
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call<'a>(tool: &'a str, args: &'a Value) -> Call<'a> {
        Call {
            tool,
            args,
            cwd: Path::new("/p/sub"),
            project: Path::new("/p"),
            home: Some(Path::new("/home/u")),
        }
    }

    fn set(behavior: Behavior, rules: &[&str]) -> RuleSet {
        let mut layer = RuleLayer::new(RuleSource::Manifest);
        let list: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
        match behavior {
            Behavior::Allow => layer.allow = list,
            Behavior::Ask => layer.ask = list,
            Behavior::Deny => layer.deny = list,
        }
        RuleSet::from_layers(&[layer]).unwrap()
    }

    fn bash(rules: &[&str], behavior: Behavior, command: &str) -> bool {
        let args = json!({ "command": command });
        set(behavior, rules)
            .matching(behavior, &call("Bash", &args))
            .is_some()
    }

    #[test]
    fn bash_prefix_wildcard_and_exact_rules() {
        use Behavior::*;
        assert!(bash(&["Bash(git diff:*)"], Allow, "git diff"));
        assert!(bash(&["Bash(git diff:*)"], Allow, "git diff --stat HEAD"));
        assert!(!bash(&["Bash(git diff:*)"], Allow, "git difftool"));
        assert!(!bash(
            &["Bash(git diff:*)"],
            Allow,
            "python3 -c 'print(41+1)'"
        ));
        assert!(bash(
            &["Bash(npm run test *)"],
            Allow,
            "npm run test --watch"
        ));
        assert!(bash(&["Bash(npm run test *)"], Allow, "npm run test"));
        assert!(!bash(&["Bash(npm run test *)"], Allow, "npm run testing"));
        assert!(bash(&["Bash(npm run test*)"], Allow, "npm run testing"));
        assert!(bash(
            &["Bash(python3 *)"],
            Allow,
            "python3 -c 'print(41+1)'"
        ));
        assert!(bash(&["Bash(ls)"], Allow, "ls"));
        assert!(!bash(&["Bash(ls)"], Allow, "ls -la"));
        assert!(bash(&["Bash"], Allow, "anything at all"));
        assert!(bash(&["Bash(*)"], Allow, "anything at all"));
    }

    #[test]
    fn compound_commands_need_every_part_allowed_and_any_part_denied() {
        use Behavior::*;
        assert!(!bash(&["Bash(git diff:*)"], Allow, "git diff && rm -rf x"));
        assert!(bash(
            &["Bash(git diff:*)", "Bash(rm:*)"],
            Allow,
            "git diff && rm -rf x"
        ));
        assert!(bash(&["Bash(rm:*)"], Deny, "git diff; rm -rf x"));
        assert!(bash(&["Bash(rm:*)"], Ask, "git diff | rm -rf x"));
        // Separators inside quotes are not separators.
        assert!(bash(&["Bash(echo:*)"], Allow, "echo 'a && rm x'"));
    }

    #[test]
    fn path_rules_anchor_as_claude_code_does() {
        use Behavior::*;
        let read = |rule: &str, path: &str| {
            let args = json!({ "file_path": path });
            set(Deny, &[rule])
                .matching(Deny, &call("Read", &args))
                .is_some()
        };
        assert!(read("Read(./src/**)", "/p/sub/src/a/b.rs"));
        assert!(read("Read(./src/**)", "src/a.rs"));
        assert!(!read("Read(./src/**)", "/p/src/a.rs"));
        assert!(read("Read(/src/**)", "/p/src/a.rs"));
        assert!(read("Read(//etc/*.conf)", "/etc/x.conf"));
        assert!(!read("Read(//etc/*.conf)", "/etc/sub/x.conf"));
        assert!(read("Read(~/.ssh/**)", "/home/u/.ssh/id_rsa"));
        assert!(
            read("Read(secret)", "/p/sub/secret/a.txt"),
            "a folder covers what is under it"
        );
        assert!(read("Read(*.env)", "/p/sub/.x/../prod.env"));
        let edit = |rule: &str, tool: &str, path: &str| {
            let args = json!({ "file_path": path });
            set(Allow, &[rule])
                .matching(Allow, &call(tool, &args))
                .is_some()
        };
        assert!(edit("Edit(/docs/**)", "Write", "/p/docs/a.md"));
        assert!(edit("Edit(/docs/**)", "Edit", "/p/docs/a/b.md"));
        assert!(!edit("Edit(/docs/**)", "Edit", "/p/other.md"));
        assert!(!edit("Edit(/docs/**)", "Read", "/p/docs/a.md"));
        assert!(
            !edit("Write(/docs/**)", "Write", "/p/docs/a.md"),
            "recorded: S31"
        );
        assert!(
            !edit("Edit", "Write", "/p/a.md"),
            "a bare Edit names Edit only"
        );
    }

    #[test]
    fn other_tools_domains_mcp_and_aliases() {
        use Behavior::*;
        let one = |rule: &str, tool: &str, args: Value| {
            set(Allow, &[rule])
                .matching(Allow, &call(tool, &args))
                .is_some()
        };
        assert!(one(
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://example.com/x"})
        ));
        assert!(!one(
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://evil.com/example.com"})
        ));
        assert!(one(
            "WebFetch(domain:*.example.com)",
            "WebFetch",
            json!({"url": "http://a.example.com:8/"})
        ));
        assert!(one("mcp__github", "mcp__github__create_issue", json!({})));
        assert!(one(
            "mcp__github__*",
            "mcp__github__create_issue",
            json!({})
        ));
        assert!(!one("mcp__github", "mcp__gitlab__x", json!({})));
        assert!(one("Task", "Agent", json!({})));
        assert!(
            !one("Agent(x)", "Agent", json!({})),
            "unknown specifiers match nothing"
        );
    }

    #[test]
    fn bad_rules_name_their_layer_list_and_index() {
        let mut layer = RuleLayer::new(RuleSource::Cli);
        layer.allow = vec!["Read".into(), "Bash(git".into()];
        let e = RuleSet::from_layers(&[layer]).unwrap_err().to_string();
        assert_eq!(
            e,
            "permission rule `Bash(git` (cli allow[1]): a specifier must end with `)`"
        );
        for bad in ["", "Ba sh", "Bash()", "WebFetch(example.com)"] {
            assert!(Rule::parse(bad).is_err(), "{bad}");
        }
    }
}
