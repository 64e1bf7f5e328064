//! Claude Code's `Skill` tool: the model runs a skill
//! (`.claude/skills/<name>/SKILL.md`) or a slash command
//! (`.claude/commands/<name>.md`), of the project or of the user, by name
//! (recorded `S294-invoke`, Claude Code 2.1.197).
//!
//! - The model reads `Launching skill: <name>`, then, in the same message,
//!   the skill's text as a slash command expands ([`crate::slash::expand`]:
//!   frontmatter out, `$ARGUMENTS` in), a skill's after `Base directory for
//!   this skill: <its folder>\n\n`.
//! - `tool_response`: `{success: true, commandName, allowedTools?,
//!   model?}` (the frontmatter's `allowed-tools`, `model`).
//! - A leading `/` is dropped. An empty name is refused with `Invalid
//!   skill format: <name>`, an unknown one with `Unknown skill: <name>`
//!   and ` Did you mean <name>?` for one within two edits (Claude Code's
//!   own commands count: `nope` → `copy`), before any hook.
//! - Project files run under the same trust rule as project commands; the
//!   user's need none. A skill of the user wins over the project's, then
//!   the project's skills over the commands.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::slash;

/// The tool's name.
pub const TOOL_NAME: &str = "Skill";

/// Where skills are, under a project or the home folder.
pub const SKILLS_DIR: &str = ".claude/skills";

/// Claude Code 2.1.197's own commands, which its `Skill` tool counts when
/// it guesses what an unknown name meant (read from its bundled source).
const BUILTIN_COMMANDS: [&str; 89] = [
    "usage-credits",
    "extra-usage",
    "add-dir",
    "autofix-pr",
    "btw",
    "feedback",
    "cd",
    "clear",
    "color",
    "copy",
    "desktop",
    "compact",
    "autocompact",
    "config",
    "context",
    "diff",
    "memory",
    "pause-memory",
    "help",
    "ide",
    "init",
    "init-verifiers",
    "design-login",
    "login",
    "logout",
    "install-github-app",
    "install-slack-app",
    "mcp",
    "mobile",
    "powerup",
    "rename",
    "resume",
    "setup-bedrock",
    "setup-vertex",
    "ultraplan",
    "review",
    "ultrareview",
    "session",
    "scroll-speed",
    "skills",
    "status",
    "tasks",
    "teleport",
    "terminal-setup",
    "usage",
    "theme",
    "tui",
    "permissions",
    "plan",
    "fast",
    "passes",
    "privacy-settings",
    "hooks",
    "loops",
    "branch",
    "fork",
    "agents",
    "plugin",
    "reload-plugins",
    "reload-skills",
    "heapdump",
    "version",
    "stickers",
    "radio",
    "advisor",
    "exit",
    "update",
    "export",
    "model",
    "remote-env",
    "upgrade",
    "pro-trial-expired",
    "rate-limit-options",
    "effort",
    "wellbeing",
    "focus",
    "brief",
    "remote-control",
    "daemon",
    "voice",
    "recap",
    "goal",
    "workflows",
    "web-setup",
    "team-onboarding",
    "background",
    "stop",
    "insights",
    "install",
];

/// Claude Code's description of the tool.
const DESCRIPTION: &str = "Execute a skill within the main conversation. Skills are the project's and the user's `.claude/skills/<name>/SKILL.md` files and slash commands (`.claude/commands/<name>.md`); pass the name as `skill` and optional arguments as `args`.";

/// The input schema as Claude Code checks it.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": "The name of a skill from the available-skills list. Do not guess names."},
            "args": {"type": "string", "description": "Optional arguments for the skill"}
        },
        "required": ["skill"],
        "additionalProperties": false
    })
}

/// The tool as advertised to the model.
pub fn spec() -> dsh_plugin_api::ToolSpec {
    dsh_plugin_api::sdk::claude_input::tool_spec(TOOL_NAME, DESCRIPTION, schema())
}

/// A skill found by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its file.
    pub path: PathBuf,
    /// The skill's folder (a `SKILL.md`), `None` for a command.
    pub dir: Option<PathBuf>,
    /// Whose it is.
    pub user: bool,
}

/// The name the model asked for, without a leading `/`.
pub fn name_of(asked: &str) -> &str {
    let trimmed = asked.trim();
    trimmed.strip_prefix('/').unwrap_or(trimmed)
}

/// Where skill or command `name` would be under `root`, most preferred
/// first: the skill, then the command.
fn candidates(root: &Path, name: &str, user: bool) -> Vec<Found> {
    let mut out = Vec::new();
    // A name the model gave never reaches outside the skills and commands
    // folders (`../x`, `a:..:b`).
    if !slash::valid_name(name) {
        return out;
    }
    if !name.contains(':') {
        let dir = root.join(SKILLS_DIR).join(name);
        out.push(Found {
            path: dir.join("SKILL.md"),
            dir: Some(dir),
            user,
        });
    }
    out.push(Found {
        path: slash::file_of(root, name),
        dir: None,
        user,
    });
    out
}

/// The skills and commands that could answer `name`: the user's first,
/// then the project's.
pub fn lookup(home: Option<&Path>, project: &Path, name: &str) -> Vec<Found> {
    let mut out = Vec::new();
    if let Some(home) = home {
        out.extend(candidates(home, name, true));
    }
    out.extend(candidates(project, name, false));
    out.retain(|f| f.path.is_file());
    out
}

/// The skill files of `project` (for `dsh trust`), sorted.
pub fn skill_files(project: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(project.join(SKILLS_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("SKILL.md"))
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Every skill and command name under the user's and the project's
/// folders, then Claude Code's own commands.
pub fn known_names(home: Option<&Path>, project: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for root in home.into_iter().chain([project]) {
        if let Ok(entries) = std::fs::read_dir(root.join(SKILLS_DIR)) {
            let mut dirs: Vec<String> = entries
                .flatten()
                .filter(|e| e.path().join("SKILL.md").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            dirs.sort();
            names.extend(dirs);
        }
        let commands = root.join(slash::COMMANDS_DIR);
        for file in slash::command_files(root) {
            if let Ok(rel) = file.strip_prefix(&commands) {
                let name = rel.with_extension("").to_string_lossy().replace('/', ":");
                names.push(name);
            }
        }
    }
    names.extend(BUILTIN_COMMANDS.iter().map(|s| s.to_string()));
    names
}

/// Claude Code's guess for an unknown name: the nearest known name within
/// two edits (the first of the nearest).
pub fn guess<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (dsh_hook_protocol::config::edit_distance(name, k), k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.as_str())
}

/// The refusal of an unknown or empty name, in Claude Code's words.
pub fn refusal(asked: &str, found: bool, known: &[String]) -> Option<String> {
    let name = name_of(asked);
    let text = if name.is_empty() {
        format!("Invalid skill format: {asked}")
    } else if found {
        return None;
    } else {
        match guess(name, known) {
            Some(g) => format!("Unknown skill: {name}. Did you mean {g}?"),
            None => format!("Unknown skill: {name}"),
        }
    };
    Some(format!("<tool_use_error>{text}</tool_use_error>"))
}

/// Whether Claude Code asks before running a skill whose file is `text`:
/// its frontmatter gives it tools (`allowed-tools`) or hooks of its own.
pub fn asks(text: &str) -> bool {
    slash::frontmatter(text, "allowed-tools").is_some_and(|v| !v.is_empty() && v != "[]")
        || slash::frontmatter(text, "hooks").is_some()
}

/// What a run of the skill gives: the text the model reads after the
/// result, and the `tool_response`.
pub fn run(found: &Found, name: &str, bytes: &[u8], args: &str) -> Result<(String, Value), String> {
    let expanded = slash::expand(&found.path, bytes, args).map_err(|e| e.to_string())?;
    let text = match &found.dir {
        Some(dir) => format!(
            "Base directory for this skill: {}\n\n{expanded}",
            dir.display()
        ),
        None => expanded,
    };
    let raw = String::from_utf8_lossy(bytes);
    let mut response = json!({"success": true, "commandName": name});
    let list = slash::allowed_tools(&raw);
    if !list.is_empty() {
        response["allowedTools"] = json!(list);
    }
    if let Some(model) = slash::frontmatter(&raw, "model") {
        response["model"] = json!(model);
    }
    Ok((text, response))
}

impl crate::ClaudeBridge {
    /// The home whose skills and commands count, if one is known.
    fn skill_home(&self) -> Option<&Path> {
        (!self.home.as_os_str().is_empty()).then_some(self.home.as_path())
    }

    /// The skill `name` of `session` that may run: the first found whose
    /// file reads and, for a project's, is trusted; with its bytes.
    fn usable_skill(
        &self,
        session: &dsh_plugin_api::SessionRef,
        name: &str,
    ) -> Option<(Found, Vec<u8>)> {
        let project = PathBuf::from(self.project_dir_of(session));
        let warn = |msg: String| self.host.warn(&format!("hooks-claude: {msg}"));
        for found in lookup(self.skill_home(), &project, name) {
            let bytes = match slash::read(&found.path) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => continue,
                Err(e) => {
                    warn(e.to_string());
                    continue;
                }
            };
            if !found.user {
                let trust = self
                    .discovery
                    .trust_of(&found.path, &bytes, &mut |p| warn(p.to_string()));
                if trust != dsh_hook_protocol::trust::Trust::Trusted {
                    warn(format!(
                        "the skill file {} is not run: it is not approved by `dsh trust` ({trust:?})",
                        found.path.display()
                    ));
                    continue;
                }
            }
            return Some((found, bytes));
        }
        None
    }

    /// The `input-check/Skill` answer: Claude Code's refusals, and its
    /// question about a skill with tools of its own (`allowed-tools` or
    /// `hooks` in its frontmatter: `Execute skill: <name>`, asked unless a
    /// rule or the mode allows it, S294-default_mode).
    pub(crate) fn check_skill(
        &self,
        request: &dsh_plugin_api::services::input_check::CheckRequest,
    ) -> Value {
        let args = &request.arguments;
        if let Some(refused) =
            dsh_plugin_api::sdk::claude_input::refusal(TOOL_NAME, &schema(), args, &[])
        {
            return json!({ "refusal": refused });
        }
        let asked = args["skill"].as_str().unwrap_or_default();
        let name = name_of(asked);
        let session = self.skill_session(request);
        let usable = if name.is_empty() {
            None
        } else {
            self.usable_skill(&session, name)
        };
        // The skill file is read once, for both answers; the names to
        // guess from only when refusing.
        let Some((_, bytes)) = usable else {
            let project = PathBuf::from(self.project_dir_of(&session));
            let known = known_names(self.skill_home(), &project);
            return json!({ "refusal": refusal(asked, false, &known) });
        };
        let ask = asks(&String::from_utf8_lossy(&bytes)).then(|| format!("Execute skill: {name}"));
        json!({ "refusal": null, "ask": ask })
    }

    fn skill_session(
        &self,
        request: &dsh_plugin_api::services::input_check::CheckRequest,
    ) -> dsh_plugin_api::SessionRef {
        dsh_plugin_api::SessionRef {
            session_id: request.session_id.as_str().into(),
            cwd: request.cwd.as_str().into(),
            log_path: Default::default(),
            permission_mode: Default::default(),
            turn_id: Default::default(),
            prompt_id: Default::default(),
            parent_session_id: dsh_plugin_api::ROption::RNone,
            agent_type: dsh_plugin_api::ROption::RNone,
        }
    }

    /// Runs a `Skill` call.
    pub(crate) fn run_skill(&self, call: &dsh_plugin_api::ToolCall) -> dsh_plugin_api::ToolResult {
        use dsh_plugin_api::ToolResult;
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let asked = args["skill"].as_str().unwrap_or_default();
        let name = name_of(asked);
        let Some((found, bytes)) = self.usable_skill(&call.session, name) else {
            return ToolResult::error(format!(
                "<tool_use_error>Unknown skill: {name}</tool_use_error>"
            ));
        };
        let given = args["args"].as_str().unwrap_or_default();
        match run(&found, name, &bytes, given) {
            Ok((text, response)) => {
                // After the result, in the same message (S294-invoke).
                if let Err(e) = self.host.inject_context(&call.session.session_id, &text) {
                    self.host.warn(&format!(
                        "hooks-claude: the skill {name}'s text was not added: {e}"
                    ));
                }
                ToolResult::text(format!("Launching skill: {name}"))
                    .with_structured(response.to_string())
            }
            Err(e) => ToolResult::error(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_get_claude_codes_guess() {
        let known = vec!["greet".to_string(), "copy".to_string()];
        assert_eq!(
            refusal("gret", false, &known).as_deref(),
            Some("<tool_use_error>Unknown skill: gret. Did you mean greet?</tool_use_error>")
        );
        assert_eq!(
            refusal("nope", false, &known).as_deref(),
            Some("<tool_use_error>Unknown skill: nope. Did you mean copy?</tool_use_error>")
        );
        assert_eq!(
            refusal("zzzzzz", false, &known).as_deref(),
            Some("<tool_use_error>Unknown skill: zzzzzz</tool_use_error>")
        );
        assert_eq!(
            refusal(" ", false, &known).as_deref(),
            Some("<tool_use_error>Invalid skill format:  </tool_use_error>")
        );
        assert_eq!(refusal("/greet", true, &known), None);
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("p/.claude/commands")).expect("mkdir");
        std::fs::write(dir.path().join("p/secret.md"), "s").expect("write");
        for sneaky in ["..:..:secret", "../../secret", ":secret"] {
            assert!(
                lookup(None, &dir.path().join("p"), sneaky).is_empty(),
                "{sneaky}"
            );
        }
    }

    #[test]
    fn a_skill_reads_after_its_folder_and_says_its_tools() {
        let dir = tempfile::tempdir().expect("tempdir");
        let project = dir.path();
        let skill = project.join(".claude/skills/greet");
        std::fs::create_dir_all(&skill).expect("mkdir");
        let text = "---\nname: greet\nallowed-tools: Bash(echo:*)\n---\nSay hello to $ARGUMENTS.\n";
        std::fs::write(skill.join("SKILL.md"), text).expect("write");
        let found = lookup(None, project, "greet");
        assert_eq!(found.len(), 1);
        let (shown, response) = run(&found[0], "greet", text.as_bytes(), "bob").expect("run");
        assert_eq!(
            shown,
            format!(
                "Base directory for this skill: {}\n\nSay hello to bob.\n",
                skill.display()
            )
        );
        assert_eq!(
            response,
            json!({"success": true, "commandName": "greet", "allowedTools": ["Bash(echo:*)"]})
        );
        assert!(known_names(None, project).starts_with(&["greet".to_string()]));
        assert!(asks(text));
        assert!(!asks("---\nname: plain\ndescription: d\n---\nbody\n"));
        assert!(asks("---\nhooks:\n  Stop: []\n---\nbody\n"));
    }
}
