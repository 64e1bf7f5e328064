//! Argument parsing shared by the file tools, and path resolution.
//!
//! Tool arguments come from the model: every accessor validates and
//! returns an [`FsToolError`] naming the parameter, never panics.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::FsToolError;

/// A tool's argument object.
pub(crate) struct Args<'a> {
    tool: &'static str,
    obj: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    pub(crate) fn new(tool: &'static str, args: &'a Value) -> Result<Self, FsToolError> {
        let obj = args.as_object().ok_or(FsToolError::NotObject {
            tool,
            detail: String::new(),
        })?;
        Ok(Args { tool, obj })
    }

    fn present(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    pub(crate) fn string(&self, key: &'static str) -> Result<&'a str, FsToolError> {
        match self.present(key) {
            None => Err(FsToolError::Missing {
                tool: self.tool,
                key,
            }),
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(self.invalid(key, "a string")),
        }
    }

    /// An optional integer >= `min` (integral floats such as `10.0` count).
    pub(crate) fn opt_count(
        &self,
        key: &'static str,
        min: u64,
    ) -> Result<Option<u64>, FsToolError> {
        let expected = if min == 0 {
            "a non-negative integer"
        } else {
            "a positive integer"
        };
        match self.present(key) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                let value = n.as_u64().or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
                        .map(|f| f as u64)
                });
                match value {
                    Some(v) if v >= min => Ok(Some(v)),
                    _ => Err(self.invalid(key, expected)),
                }
            }
            Some(_) => Err(self.invalid(key, expected)),
        }
    }

    pub(crate) fn opt_bool(&self, key: &'static str) -> Result<Option<bool>, FsToolError> {
        match self.present(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.invalid(key, "a boolean")),
        }
    }

    /// `file_path`, resolved against `cwd` when relative.
    pub(crate) fn file_path(&self, cwd: &Path) -> Result<PathBuf, FsToolError> {
        let raw = self.string("file_path")?;
        if raw.is_empty() {
            return Err(self.invalid("file_path", "a non-empty path"));
        }
        Ok(resolve(cwd, raw))
    }

    fn invalid(&self, key: &'static str, expected: &'static str) -> FsToolError {
        FsToolError::Invalid {
            tool: self.tool,
            key,
            expected,
        }
    }
}

/// `path` if absolute, else `cwd/path`. No `~` expansion, no symlink
/// resolution: the path the model names is the path used.
pub fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// Parses a tool call's JSON argument text.
pub(crate) fn parse_json(tool: &'static str, text: &str) -> Result<Value, FsToolError> {
    serde_json::from_str(text).map_err(|e| FsToolError::NotObject {
        tool,
        detail: format!(" (not JSON: {e})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolves_relative_paths_against_cwd() {
        assert_eq!(
            resolve(Path::new("/w"), "a/b.txt"),
            PathBuf::from("/w/a/b.txt")
        );
        assert_eq!(resolve(Path::new("/w"), "/etc/x"), PathBuf::from("/etc/x"));
    }

    #[test]
    fn counts_accept_integral_numbers_only() {
        let v = json!({"a": 3, "b": 4.0, "c": 1.5, "d": -1, "e": "2", "f": 0});
        let args = Args::new("Read", &v).expect("object");
        assert_eq!(args.opt_count("a", 1).expect("ok"), Some(3));
        assert_eq!(args.opt_count("b", 1).expect("ok"), Some(4));
        assert_eq!(args.opt_count("missing", 1).expect("ok"), None);
        for key in ["c", "d", "e"] {
            assert!(args.opt_count(key, 0).is_err(), "{key}");
        }
        assert!(args.opt_count("f", 1).is_err());
        assert_eq!(args.opt_count("f", 0).expect("ok"), Some(0));
    }

    #[test]
    fn errors_name_the_tool_and_parameter() {
        let v = json!({"file_path": 7});
        let err = Args::new("Write", &v)
            .expect("object")
            .string("file_path")
            .expect_err("invalid");
        assert_eq!(
            err.to_string(),
            "Write: parameter `file_path` must be a string"
        );
        let err = Args::new("Edit", &v)
            .expect("object")
            .string("old_string")
            .expect_err("missing");
        assert_eq!(
            err.to_string(),
            "Edit: missing required parameter `old_string`"
        );
    }
}
