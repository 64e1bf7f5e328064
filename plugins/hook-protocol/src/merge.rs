//! Merging the answers of every hook on one point: deny > ask > allow.
//!
//! Each hook yields at most one permission (a blocking exit 2 counts as a
//! deny) and any number of contexts. The strongest permission wins; the
//! reasons that come with it are kept in config order so the bridge can
//! render them (Claude joins them, Codex takes the first). Contexts are never
//! dropped: every hook's context is kept, in config order.

/// A hook's say on whether the point may proceed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    /// Proceed.
    Allow,
    /// Ask the user (the approval service).
    Ask,
    /// Do not proceed.
    Deny,
}

/// One hook's vote: a permission and the reason it gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vote {
    /// Allow, ask or deny.
    pub permission: Permission,
    /// The model- or user-facing reason, when the hook gave one.
    pub reason: Option<String>,
}

impl Vote {
    /// A vote with a reason.
    pub fn new(permission: Permission, reason: Option<String>) -> Self {
        Vote { permission, reason }
    }
}

/// The merged decision of one point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Merged {
    /// The strongest permission any hook gave; `None` when no hook decided.
    pub permission: Option<Permission>,
    /// The reasons given with that permission, in config order.
    pub reasons: Vec<String>,
}

impl Merged {
    /// Whether the point is denied.
    pub fn denied(&self) -> bool {
        self.permission == Some(Permission::Deny)
    }
}

/// Merges votes given in config order.
pub fn merge<I>(votes: I) -> Merged
where
    I: IntoIterator<Item = Vote>,
{
    let votes: Vec<Vote> = votes.into_iter().collect();
    let Some(strongest) = votes.iter().map(|v| v.permission).max() else {
        return Merged::default();
    };
    Merged {
        permission: Some(strongest),
        reasons: votes
            .into_iter()
            .filter(|v| v.permission == strongest)
            .filter_map(|v| v.reason)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(p: Permission, r: &str) -> Vote {
        Vote::new(p, Some(r.into()))
    }

    #[test]
    fn deny_beats_ask_beats_allow() {
        let m = merge([
            v(Permission::Allow, "ok"),
            v(Permission::Ask, "hm"),
            v(Permission::Deny, "no"),
        ]);
        assert_eq!(m.permission, Some(Permission::Deny));
        assert_eq!(m.reasons, ["no"]);
        let m = merge([v(Permission::Allow, "ok"), v(Permission::Ask, "hm")]);
        assert_eq!(m.permission, Some(Permission::Ask));
    }

    #[test]
    fn reasons_of_the_winner_stay_in_config_order() {
        let m = merge([
            v(Permission::Deny, "first"),
            v(Permission::Allow, "x"),
            v(Permission::Deny, "second"),
        ]);
        assert_eq!(m.reasons, ["first", "second"]);
    }

    #[test]
    fn no_votes_no_decision() {
        assert_eq!(merge([]), Merged::default());
        assert!(!merge([]).denied());
    }
}
