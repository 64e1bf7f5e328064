//! The permission rules of Claude Code's settings files, per session.
//!
//! When the manifest loads `hooks-claude`, the `permissions` blocks of the
//! settings files that bridge reads (the `config_path` files, and with
//! `discover: true` the user, project, local and managed settings of the
//! session's folder) are rule layers of each new or loaded session, merged
//! with the manifest's and the CLI's by Claude Code's precedence
//! ([`crate::permissions::RuleSet`]). An untrusted project's `allow`
//! entries are ignored while its `ask` and `deny` entries apply, as Claude
//! Code does (recorded, `FINDINGS-perm.md`, S31). A rule that does not
//! parse is left out alone, named with its file and key (in the log, and in
//! `dsh check` through [`rule_problems`]): the file's other rules, its
//! denies above all, still apply.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_hooks_claude::config::Config as ClaudeConfig;
use dsh_hooks_claude::permissions::{PermissionLayer, PermissionSource};

use crate::permissions::{Rule, RuleLayer, RuleSource};

/// What reads the rule layers for a session's folder.
type ReadLayers = dyn Fn(&Path) -> Vec<RuleLayer> + Send + Sync;

/// Reads the settings rule layers of a session started in a folder.
#[derive(Clone)]
pub struct SettingsRules(Arc<ReadLayers>);

impl std::fmt::Debug for SettingsRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SettingsRules")
    }
}

impl SettingsRules {
    /// Rules from `read`, called with a session's folder.
    pub fn new(read: impl Fn(&Path) -> Vec<RuleLayer> + Send + Sync + 'static) -> Self {
        SettingsRules(Arc::new(read))
    }

    /// The rules of the settings files the `hooks-claude` bridge configured
    /// by `config` (paths already absolute) reads, with project trust from
    /// `state_dir`.
    pub fn claude(config: ClaudeConfig, state_dir: PathBuf) -> Self {
        SettingsRules::new(move |cwd| {
            dsh_hooks_claude::discover::permission_layers(&config, Some(state_dir.clone()), cwd)
                .into_iter()
                .map(|layer| {
                    let (layer, problems) = parsed_rules_only(layer);
                    for problem in problems {
                        tracing::warn!("{problem}");
                    }
                    layer
                })
                // A file with rules makes the session's permissions managed,
                // even when trust leaves none of them in effect.
                .filter(|l| {
                    let r = &l.rules;
                    !(r.allow.is_empty() && r.ask.is_empty() && r.deny.is_empty())
                })
                .map(rule_layer)
                .collect()
        })
    }

    /// The layers for a session started in `cwd`, lowest precedence first.
    pub(crate) fn layers(&self, cwd: &Path) -> Vec<RuleLayer> {
        (self.0)(cwd)
    }
}

/// What is wrong with the permission rules of the settings files a session
/// in `cwd` would read, one line each naming the file and the key.
pub fn rule_problems(config: &ClaudeConfig, state_dir: PathBuf, cwd: &Path) -> Vec<String> {
    dsh_hooks_claude::discover::permission_layers(config, Some(state_dir), cwd)
        .into_iter()
        .flat_map(|layer| parsed_rules_only(layer).1)
        .collect()
}

/// `layer` without the rules that do not parse, and a line for each.
fn parsed_rules_only(layer: PermissionLayer) -> (PermissionLayer, Vec<String>) {
    let PermissionLayer {
        source,
        file,
        trusted,
        mut rules,
    } = layer;
    let mut problems = Vec::new();
    for (list, texts) in [
        ("allow", &mut rules.allow),
        ("ask", &mut rules.ask),
        ("deny", &mut rules.deny),
    ] {
        let mut index = 0;
        texts.retain(|text| {
            let at = index;
            index += 1;
            match Rule::parse(text) {
                Ok(_) => true,
                Err(why) => {
                    problems.push(format!(
                        "{}: key `permissions.{list}[{at}]`: permission rule `{text}`: {why}; the rule is ignored, the file's other rules apply",
                        file.display()
                    ));
                    false
                }
            }
        });
    }
    let layer = PermissionLayer {
        source,
        file,
        trusted,
        rules,
    };
    (layer, problems)
}

fn rule_layer(layer: PermissionLayer) -> RuleLayer {
    let source = match layer.source {
        PermissionSource::User => RuleSource::User,
        PermissionSource::Project => RuleSource::Project,
        PermissionSource::Local => RuleSource::Local,
        // A `config_path` file is Claude Code's `--settings` layer.
        PermissionSource::Explicit => RuleSource::Cli,
        PermissionSource::Managed => RuleSource::Managed,
    };
    RuleLayer {
        source,
        allow: if layer.trusted {
            layer.rules.allow
        } else {
            Vec::new()
        },
        ask: layer.rules.ask,
        deny: layer.rules.deny,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_hooks_claude::permissions::PermissionRules;

    fn layer(source: PermissionSource, trusted: bool) -> PermissionLayer {
        PermissionLayer {
            source,
            file: PathBuf::from("/p/.claude/settings.json"),
            trusted,
            rules: PermissionRules {
                allow: vec!["Bash(ls:*)".into()],
                ask: vec!["Bash(git push:*)".into()],
                deny: vec!["Read(./.env)".into()],
                default_mode: None,
            },
        }
    }

    #[test]
    fn an_untrusted_project_keeps_its_asks_and_denies_but_not_its_allows() {
        let untrusted = rule_layer(layer(PermissionSource::Project, false));
        assert_eq!(untrusted.source, RuleSource::Project);
        assert!(untrusted.allow.is_empty());
        assert_eq!(untrusted.ask, ["Bash(git push:*)"]);
        assert_eq!(untrusted.deny, ["Read(./.env)"]);
        let trusted = rule_layer(layer(PermissionSource::Local, true));
        assert_eq!(trusted.source, RuleSource::Local);
        assert_eq!(trusted.allow, ["Bash(ls:*)"]);
        assert_eq!(
            rule_layer(layer(PermissionSource::Explicit, true)).source,
            RuleSource::Cli
        );
    }
}
