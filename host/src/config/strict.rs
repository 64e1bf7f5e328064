//! What plain YAML lets through and a manifest must not: a key given twice
//! in one mapping (YAML keeps one of them silently, so a second `deny:`
//! could switch a gate off) and a document with nothing in it (an emptied
//! or half-written file would otherwise reload as "no plugins").
//!
//! figment deserializes YAML into a map and keeps the last of two equal
//! keys, so the text is walked here first with serde_yaml's event-driven
//! deserializer, before figment sees it. The walk allocates nothing per
//! value beyond one key set per mapping, and serde_yaml's own recursion
//! limit bounds its depth.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};

/// A key that appears twice in one mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Duplicate {
    /// The key, as written.
    pub(crate) key: String,
    /// Where the mapping sits: `plugins[1].config`, or empty for the top level.
    pub(crate) at: String,
}

/// What the strict pass found.
#[derive(Debug)]
pub(crate) enum Finding {
    /// The document holds nothing (empty, whitespace, comments, or `null`).
    Empty,
    /// A key appears twice in one mapping.
    Duplicate(Duplicate),
    /// The YAML does not parse; figment will report it with its own words.
    Malformed,
}

/// Walks `text`; `Ok(())` when it is a non-empty document with no
/// duplicate key.
pub(crate) fn check(text: &str) -> Result<(), Finding> {
    let found = RefCell::new(None);
    let walk = Walk {
        at: String::new(),
        found: &found,
    };
    match walk.deserialize(serde_yaml::Deserializer::from_str(text)) {
        Ok(Shape::Nothing) => Err(Finding::Empty),
        Ok(Shape::Something) => Ok(()),
        // serde_yaml's error only says where the mapping began, so the
        // place is the key path recorded by the walk.
        Err(_) => match found.into_inner() {
            Some(duplicate) => Err(Finding::Duplicate(duplicate)),
            None => Err(Finding::Malformed),
        },
    }
}

/// Whether a value holds anything.
enum Shape {
    Nothing,
    Something,
}

struct Walk<'a> {
    at: String,
    found: &'a RefCell<Option<Duplicate>>,
}

impl<'a> Walk<'a> {
    fn child(&self, step: fmt::Arguments<'_>) -> Walk<'a> {
        Walk {
            at: format!("{}{step}", self.at),
            found: self.found,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = Shape;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Shape, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// Any scalar key, rendered as the manifest's reader will see it.
struct KeyText(String);

impl<'de> serde::Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<KeyText, D::Error> {
        let key = serde_yaml::Value::deserialize(deserializer)?;
        Ok(KeyText(match key {
            serde_yaml::Value::String(s) => s,
            serde_yaml::Value::Null => "~".into(),
            serde_yaml::Value::Bool(b) => b.to_string(),
            serde_yaml::Value::Number(n) => n.to_string(),
            other => serde_yaml::to_string(&other)
                .unwrap_or_default()
                .trim_end()
                .to_string(),
        }))
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Something)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Something)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Something)
    }

    fn visit_i128<E>(self, _: i128) -> Result<Shape, E> {
        Ok(Shape::Something)
    }

    fn visit_u128<E>(self, _: u128) -> Result<Shape, E> {
        Ok(Shape::Something)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Something)
    }

    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Something)
    }

    fn visit_bytes<E>(self, _: &[u8]) -> Result<Shape, E> {
        Ok(Shape::Something)
    }

    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Nothing)
    }

    fn visit_none<E>(self) -> Result<Shape, E> {
        Ok(Shape::Nothing)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Shape, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let mut index = 0usize;
        while seq
            .next_element_seed(self.child(format_args!("[{index}]")))?
            .is_some()
        {
            index += 1;
        }
        Ok(Shape::Something)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut keys = HashSet::new();
        while let Some(KeyText(key)) = map.next_key()? {
            let dot = if self.at.is_empty() { "" } else { "." };
            let child = self.child(format_args!("{dot}{key}"));
            if !keys.insert(key.clone()) {
                *self.found.borrow_mut() = Some(Duplicate {
                    key: key.clone(),
                    at: self.at.clone(),
                });
                return Err(serde::de::Error::custom(format!("duplicate key `{key}`")));
            }
            map.next_value_seed(child)?;
        }
        Ok(Shape::Something)
    }

    /// A tagged value (`!tag value`): walk the value.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Shape, A::Error> {
        use serde::de::VariantAccess as _;
        let (_, variant) = data.variant::<serde::de::IgnoredAny>()?;
        variant.newtype_variant_seed(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn duplicate(text: &str) -> Duplicate {
        match check(text) {
            Err(Finding::Duplicate(d)) => d,
            other => panic!("expected a duplicate in {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn empty_whitespace_comment_and_null_documents_are_empty() {
        for text in [
            "",
            "\n\n",
            "   \n  \n",
            "# only a comment\n",
            "# a\n\n  # b",
            "~\n",
        ] {
            assert!(
                matches!(check(text), Err(Finding::Empty)),
                "{text:?}: {:?}",
                check(text)
            );
        }
    }

    #[test]
    fn duplicates_are_found_at_every_level_with_their_place() {
        assert_eq!(
            duplicate("log_level: info\nstate_dir: s\nlog_level: debug\n"),
            Duplicate {
                key: "log_level".into(),
                at: String::new(),
            }
        );
        assert_eq!(
            duplicate("plugins:\n  - name: a\n  - name: b\n    name: c\n"),
            Duplicate {
                key: "name".into(),
                at: "plugins[1]".into(),
            }
        );
        assert_eq!(
            duplicate("plugins:\n  - name: g\n    config:\n      deny: [x]\n      deny: []\n"),
            Duplicate {
                key: "deny".into(),
                at: "plugins[0].config".into(),
            }
        );
        // Flow style, tagged values and numeric keys are walked too.
        assert_eq!(duplicate("a: {b: 1, b: 2}\n").at, "a");
        assert_eq!(duplicate("a: !t {c: 1, c: 2}\n").key, "c");
        assert_eq!(duplicate("m: {1: x, \"1\": y}\n").key, "1");
    }

    #[test]
    fn ordinary_documents_pass_and_broken_ones_are_left_to_figment() {
        assert!(check("plugins: []\n").is_ok());
        assert!(check("{}\n").is_ok());
        assert!(check("a: {b: 1}\nc: [{b: 1}, {b: 2}]\n").is_ok());
        assert!(matches!(check("plugins: ["), Err(Finding::Malformed)));
    }
}
