//! dsh's own environment, read once and kept as the `NAME=value` C strings
//! a child's `envp` points at, and each child's environment built from it.
//!
//! std's `Command` copies the whole environment into a map and then into
//! new C strings at every spawn that changes anything in it (every hook
//! and `Bash` call does), and the runner read it once more before (issue
//! 15: a quarter of the daemon's instructions per turn). Here the
//! environment is copied when it changed: a [`Snapshot`] remembers the
//! `environ` entries it was read from (their addresses, which `setenv`
//! and `unsetenv` replace), and a spawn compares them, a few dozen
//! pointers, before using it. Each entry's credential verdict is worked out
//! once per snapshot. [`child_envp`] then keeps the entries a request
//! keeps, merged with the request's own variables (which win), in name
//! order, as std and [`super::env::child_env`] order them.

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString, c_char};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::sync::{Arc, Mutex, OnceLock};

use super::env::is_credential;

unsafe extern "C" {
    /// The C library's environment (POSIX `environ`).
    static environ: *const *const c_char;
}

/// One inherited variable.
pub(crate) struct Entry {
    /// `NAME=value`, as the child gets it.
    line: CString,
    /// Where `=` is in `line`.
    eq: usize,
    /// Whether it holds a credential ([`is_credential`]); false for a name
    /// that is not UTF-8, which is never scrubbed.
    credential: bool,
}

impl Entry {
    fn new(name: OsString, value: OsString) -> Option<Entry> {
        let credential = name
            .to_str()
            .is_some_and(|n| is_credential(n, &value.to_string_lossy()));
        let eq = name.len();
        let mut bytes = name.into_vec();
        bytes.push(b'=');
        bytes.extend_from_slice(value.as_bytes());
        // `environ` holds no NUL inside an entry; skip one if it did.
        let line = CString::new(bytes).ok()?;
        Some(Entry {
            line,
            eq,
            credential,
        })
    }

    pub(crate) fn name(&self) -> &[u8] {
        self.line.as_bytes().get(..self.eq).unwrap_or_default()
    }

    pub(crate) fn value(&self) -> &[u8] {
        self.line.as_bytes().get(self.eq + 1..).unwrap_or_default()
    }

    pub(crate) fn is_credential(&self) -> bool {
        self.credential
    }
}

/// The environment as read at one moment: one entry per name (the last of
/// a repeated name, as std reads it), in name order.
pub(crate) struct Snapshot {
    entries: Vec<Entry>,
    /// The `environ` entries it was read from; empty when the environment
    /// changed while it was read (then it is never reused).
    source: Vec<usize>,
}

impl Snapshot {
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn read() -> Snapshot {
        let before = environ_entries(None);
        let mut entries: Vec<Entry> = std::env::vars_os()
            .filter_map(|(name, value)| Entry::new(name, value))
            .collect();
        let after = environ_entries(None);
        // Stable: of a repeated name, the last one read stays last.
        entries.sort_by(|a, b| a.name().cmp(b.name()));
        let mut unique: Vec<Entry> = Vec::with_capacity(entries.len());
        for entry in entries {
            match unique.last_mut() {
                Some(last) if last.name() == entry.name() => *last = entry,
                _ => unique.push(entry),
            }
        }
        let source = match (before, after) {
            (Some(before), Some(after)) if before == after => before,
            _ => Vec::new(),
        };
        Snapshot {
            entries: unique,
            source,
        }
    }

    /// Whether `environ` still holds exactly the entries this was read from.
    fn current(&self) -> bool {
        !self.source.is_empty() && environ_entries(Some(&self.source)).is_some()
    }
}

/// The addresses of `environ`'s entries, or (with `expect`) whether they
/// are exactly `expect`, reading at most one more slot than it has. `None`
/// when they differ or there are implausibly many.
fn environ_entries(expect: Option<&[usize]>) -> Option<Vec<usize>> {
    const MAX: usize = 1 << 16;
    // SAFETY: `environ` is the C library's array of entries, ended by a
    // null pointer; only the pointers are read (never what they point
    // to), and at most `expect.len() + 1` of them when comparing. The
    // environment is only changed through std (`set_var`, under its own
    // lock and, being `unsafe`, only where no other thread reads the
    // environment); a change that raced this read makes the addresses
    // differ, and the snapshot is read again under std's lock.
    unsafe {
        let base = std::ptr::addr_of!(environ).read();
        if base.is_null() {
            return match expect {
                Some([]) | None => Some(Vec::new()),
                Some(_) => None,
            };
        }
        match expect {
            Some(expect) => {
                for (i, want) in expect.iter().enumerate() {
                    if base.add(i).read() as usize != *want {
                        return None;
                    }
                }
                base.add(expect.len()).read().is_null().then(Vec::new)
            }
            None => {
                let mut found = Vec::new();
                loop {
                    let entry = base.add(found.len()).read();
                    if entry.is_null() {
                        return Some(found);
                    }
                    if found.len() >= MAX {
                        return None;
                    }
                    found.push(entry as usize);
                }
            }
        }
    }
}

/// The current snapshot: the cached one while `environ` is unchanged.
pub(crate) fn snapshot() -> Arc<Snapshot> {
    static CACHE: OnceLock<Mutex<Option<Arc<Snapshot>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(None));
    let mut cached = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(snapshot) = cached.as_ref().filter(|s| s.current()) {
        return Arc::clone(snapshot);
    }
    let fresh = Arc::new(Snapshot::read());
    *cached = Some(Arc::clone(&fresh));
    fresh
}

/// What a request asks of its child's environment (the fields of
/// [`super::RunRequest`] that shape it).
pub(crate) struct Shape<'a> {
    pub(crate) inherit: bool,
    pub(crate) scrub: bool,
    pub(crate) allow: &'a [String],
    pub(crate) remove_prefixes: &'a [String],
    pub(crate) explicit: &'a BTreeMap<String, String>,
}

impl Shape<'_> {
    /// Whether an inherited entry stays, as [`super::env::child_env`]
    /// decides it: a name that is not UTF-8 always stays.
    fn keeps(&self, entry: &Entry) -> bool {
        let Ok(name) = std::str::from_utf8(entry.name()) else {
            return true;
        };
        (!self.scrub || !entry.credential || self.allow.iter().any(|a| a == name))
            && !self
                .remove_prefixes
                .iter()
                .any(|p| name.starts_with(p.as_str()))
    }
}

/// A child's `envp`: pointers into the snapshot's entries and the
/// request's own lines, which it keeps alive.
pub(crate) struct Envp {
    _snapshot: Arc<Snapshot>,
    _own: Vec<CString>,
    /// Null-terminated.
    pointers: Vec<*const c_char>,
    /// The length of each line's name, in the order of `pointers`.
    names: Vec<usize>,
    /// The child's `PATH`, if it has one.
    path: Option<OsString>,
}

// SAFETY: the pointers point into `_snapshot` and `_own`, which the value
// owns and never changes.
unsafe impl Send for Envp {}

impl Envp {
    pub(crate) fn as_ptr(&self) -> *const *const c_char {
        self.pointers.as_ptr()
    }

    pub(crate) fn path(&self) -> Option<&OsStr> {
        self.path.as_deref()
    }

    /// The variables, in order, as names and values.
    pub(crate) fn vars(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.pointers.iter().zip(&self.names).map(|(p, len)| {
            // SAFETY: each pointer before the last (null) one is a C string
            // `self` owns.
            let line = unsafe { std::ffi::CStr::from_ptr(*p) }.to_bytes();
            let (name, value) = line.split_at((*len).min(line.len()));
            (
                OsStr::from_bytes(name),
                OsStr::from_bytes(value.get(1..).unwrap_or_default()),
            )
        })
    }

    #[cfg(test)]
    fn lines(&self) -> Vec<Vec<u8>> {
        self.pointers
            .iter()
            .take_while(|p| !p.is_null())
            // SAFETY: each non-null pointer is a C string `self` owns.
            .map(|p| unsafe { std::ffi::CStr::from_ptr(*p) }.to_bytes().to_vec())
            .collect()
    }
}

/// The environment a child gets, in name order; `Err` when a request's
/// variable holds a NUL byte (std's message).
pub(crate) fn child_envp(snapshot: Arc<Snapshot>, shape: &Shape<'_>) -> std::io::Result<Envp> {
    let inherited: &[Entry] = if shape.inherit {
        snapshot.entries()
    } else {
        &[]
    };
    let mut own = Vec::with_capacity(shape.explicit.len());
    let mut order: Vec<Pick> = Vec::with_capacity(inherited.len() + shape.explicit.len());
    let mut explicit = shape.explicit.iter().peekable();
    let mut path: Option<OsString> = None;
    for (at, entry) in inherited.iter().enumerate() {
        // The request's variables that sort before this one, or replace it.
        let mut replaced = false;
        while let Some((name, value)) = explicit.next_if(|(n, _)| n.as_bytes() <= entry.name()) {
            own.push(own_line(name, value)?);
            order.push(Pick::Own(own.len() - 1));
            if name == "PATH" {
                path = Some(OsString::from(value));
            }
            replaced |= name.as_bytes() == entry.name();
        }
        if !replaced && shape.keeps(entry) {
            order.push(Pick::Inherited(at));
            if entry.name() == b"PATH" {
                path = Some(OsStr::from_bytes(entry.value()).to_os_string());
            }
        }
    }
    for (name, value) in explicit {
        own.push(own_line(name, value)?);
        order.push(Pick::Own(own.len() - 1));
        if name == "PATH" {
            path = Some(OsString::from(value));
        }
    }
    let mut pointers: Vec<*const c_char> = Vec::with_capacity(order.len() + 1);
    let mut names: Vec<usize> = Vec::with_capacity(order.len());
    for pick in &order {
        let (line, name) = match pick {
            Pick::Inherited(at) => (&inherited[*at].line, inherited[*at].eq),
            Pick::Own(at) => (&own[*at].0, own[*at].1),
        };
        pointers.push(line.as_ptr());
        names.push(name);
    }
    pointers.push(std::ptr::null());
    Ok(Envp {
        _snapshot: snapshot,
        _own: own.into_iter().map(|(line, _)| line).collect(),
        pointers,
        names,
        path,
    })
}

enum Pick {
    Inherited(usize),
    Own(usize),
}

fn own_line(name: &str, value: &str) -> std::io::Result<(CString, usize)> {
    let mut line = Vec::with_capacity(name.len() + value.len() + 1);
    line.extend_from_slice(name.as_bytes());
    line.push(b'=');
    line.extend_from_slice(value.as_bytes());
    let line = CString::new(line).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "nul byte found in provided data",
        )
    })?;
    Ok((line, name.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot_of(pairs: &[(&[u8], &[u8])]) -> Arc<Snapshot> {
        let mut entries: Vec<Entry> = pairs
            .iter()
            .filter_map(|(n, v)| {
                Entry::new(
                    OsString::from_vec(n.to_vec()),
                    OsString::from_vec(v.to_vec()),
                )
            })
            .collect();
        entries.sort_by(|a, b| a.name().cmp(b.name()));
        Arc::new(Snapshot {
            entries,
            source: Vec::new(),
        })
    }

    /// For many shapes of request, the lines are exactly what
    /// `child_env` (the route std was handed before) makes of the same
    /// environment, in the same order.
    #[test]
    fn the_envp_is_what_child_env_builds() {
        let host: Vec<(&[u8], &[u8])> = vec![
            (b"PATH", b"/usr/bin:/bin"),
            (b"HOME", b"/root"),
            (b"OPENAI_API_KEY", b"sk-x"),
            (b"MY_TOKEN", b"t"),
            (b"DATABASE_URL", b"postgres://a:pw@db/x"),
            (b"PUBLIC_URL", b"https://example.com"),
            (b"OTEL_SERVICE_NAME", b"svc"),
            (b"OTEL_EXPORTER_OTLP_HEADERS_TOKEN", b"h"),
            (b"LANG", b"C.UTF-8"),
            (b"X", b"old"),
            (b"\xffODD", b"not utf-8 name"),
            (b"ODD_VALUE", b"\xfe\xff"),
            (b"A", b""),
        ];
        let snapshot = snapshot_of(&host);
        let inherited: Vec<(OsString, OsString)> = host
            .iter()
            .map(|(n, v)| {
                (
                    OsString::from_vec(n.to_vec()),
                    OsString::from_vec(v.to_vec()),
                )
            })
            .collect();
        let explicits: Vec<BTreeMap<String, String>> = vec![
            BTreeMap::new(),
            BTreeMap::from([("X".into(), "new".into())]),
            BTreeMap::from([
                ("AAA".into(), "first".into()),
                ("PATH".into(), "/opt/bin".into()),
                ("ZZZ".into(), "last".into()),
                ("MY_TOKEN".into(), "asked".into()),
                ("OTEL_MINE".into(), "1".into()),
            ]),
        ];
        let prefixes: Vec<Vec<String>> = vec![vec![], vec!["OTEL_".into()], vec!["P".into()]];
        let allows: Vec<Vec<String>> = vec![vec![], vec!["DATABASE_URL".into()]];
        for inherit in [true, false] {
            for scrub in [true, false] {
                for allow in &allows {
                    for remove in &prefixes {
                        for explicit in &explicits {
                            let want: Vec<Vec<u8>> = crate::runner::env::child_env(
                                inherited.clone(),
                                inherit,
                                scrub,
                                allow,
                                remove,
                                explicit,
                            )
                            .into_iter()
                            .map(|(n, v)| {
                                let mut line = n.into_vec();
                                line.push(b'=');
                                line.extend_from_slice(v.as_bytes());
                                line
                            })
                            .collect();
                            let shape = Shape {
                                inherit,
                                scrub,
                                allow,
                                remove_prefixes: remove,
                                explicit,
                            };
                            let envp = child_envp(Arc::clone(&snapshot), &shape).unwrap();
                            assert_eq!(
                                envp.lines(),
                                want,
                                "inherit {inherit} scrub {scrub} allow {allow:?} remove {remove:?} explicit {explicit:?}"
                            );
                            let path = want
                                .iter()
                                .find_map(|l| l.strip_prefix(b"PATH="))
                                .map(|v| OsStr::from_bytes(v).to_os_string());
                            assert_eq!(envp.path().map(OsStr::to_os_string), path);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_nul_in_a_requested_variable_is_refused_as_std_refuses_it() {
        let explicit = BTreeMap::from([("BAD".to_string(), "a\0b".to_string())]);
        let shape = Shape {
            inherit: true,
            scrub: true,
            allow: &[],
            remove_prefixes: &[],
            explicit: &explicit,
        };
        let e = child_envp(snapshot_of(&[]), &shape).err().unwrap();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(e.to_string(), "nul byte found in provided data");
    }

    /// The process's own environment, read as std reads it.
    #[test]
    fn the_snapshot_is_the_environment_std_reads() {
        let snapshot = snapshot();
        let mut want: BTreeMap<OsString, OsString> = BTreeMap::new();
        for (n, v) in std::env::vars_os() {
            want.insert(n, v);
        }
        let got: Vec<(OsString, OsString)> = snapshot
            .entries()
            .iter()
            .map(|e| {
                (
                    OsStr::from_bytes(e.name()).to_os_string(),
                    OsStr::from_bytes(e.value()).to_os_string(),
                )
            })
            .collect();
        assert_eq!(got, want.into_iter().collect::<Vec<_>>());
    }
}
