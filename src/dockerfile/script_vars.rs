//! The variables a RUN script sets for itself, read the way the shell reads
//! them, so that `buildDeps='torch torchvision' && pip install $buildDeps`
//! installs torch and torchvision for the rules, not `$buildDeps`.
//!
//! Assignments are taken in order: a bare `NAME=value`, `export`/`readonly`/
//! `local`/`declare`/`typeset NAME=value`, `unset NAME`, and a `for NAME in
//! …` loop's list. Where the shell's result cannot be decided here, the
//! variable becomes unknown and its references stay as written: a value
//! with a command substitution or an unknown variable in it, an assignment
//! in a branch whose condition is not known, one after `||`, `read NAME`.
//! An assignment in a branch the build does not take changes nothing.

use std::collections::HashSet;

use crate::dockerfile::expand::{VarScope, VarValue, Vars};
use crate::dockerfile::model::Reach;

/// Builtins whose `NAME=value` arguments assign.
pub const DECLARING_BUILTINS: [&str; 5] = ["export", "readonly", "local", "declare", "typeset"];
/// Builtins that set the variables they name from input.
const READING_BUILTINS: [&str; 3] = ["read", "mapfile", "readarray"];

/// A word of a command as the splitter produced it.
#[derive(Clone, Copy, Debug)]
pub struct ScriptWord<'a> {
    pub text: &'a str,
    /// No part of it is left unexpanded (`$(…)`, an unknown `$VAR`).
    pub resolved: bool,
}

/// The script's own variables, shadowing the Dockerfile's ARGs and ENVs.
#[derive(Clone, Debug, Default)]
pub struct ScriptVars {
    scope: VarScope,
    /// Loop variables that stand for their whole list: a reference expands
    /// to every item as a separate word, quoted or not (the body runs once
    /// per item; for the rules, one command over all items reads the same).
    lists: HashSet<String>,
}

impl Vars for ScriptVars {
    fn get(&self, name: &str) -> Option<VarValue<'_>> {
        self.scope.get(name)
    }
}

/// `NAME` is a shell variable name.
pub fn is_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl ScriptVars {
    /// Whether `name` is a loop variable standing for its list.
    pub fn is_list(&self, name: &str) -> bool {
        self.lists.contains(name)
    }

    /// `name=value` ran with `reach`; `value` is `None` when not known.
    pub fn assign(&mut self, name: &str, value: Option<String>, reach: Reach) {
        if !is_name(name) {
            return;
        }
        let value = match reach {
            Reach::Skipped => return,
            Reach::Runs => value,
            Reach::Unknown => None,
        };
        self.lists.remove(name);
        self.scope.set(name, value);
    }

    /// A simple command's effect on the variables: its words (program
    /// first) and the assignments it was written with (which, before a
    /// program, last only for that program).
    pub fn command(
        &mut self,
        words: &[ScriptWord<'_>],
        assignments: &[(String, ScriptWord<'_>)],
        reach: Reach,
    ) {
        let Some((program, args)) = words.split_first() else {
            for (name, value) in assignments {
                let known = value.resolved.then(|| value.text.to_string());
                self.assign(name, known, reach);
            }
            return;
        };
        let operands = args.iter().filter(|w| !w.text.starts_with(['-', '+']));
        if DECLARING_BUILTINS.contains(&program.text) {
            for word in operands {
                if let Some((name, value)) = word.text.split_once('=') {
                    let known =
                        (word.resolved && !value.starts_with('(')).then(|| value.to_string());
                    self.assign(name, known, reach);
                }
            }
        } else if program.text == "unset" {
            for word in operands {
                self.assign(word.text, Some(String::new()), reach);
            }
        } else if READING_BUILTINS.contains(&program.text) {
            for word in operands {
                self.assign(word.text, None, reach);
            }
        }
    }

    /// The header of `for NAME in ITEMS…` (`words` after `for`).
    pub fn for_header(&mut self, words: &[ScriptWord<'_>], reach: Reach) {
        let Some((name, rest)) = words.split_first() else {
            return;
        };
        let items = match rest.split_first() {
            Some((word, items)) if word.text == "in" => items,
            // `for NAME; do` loops over the positional parameters.
            _ => {
                self.assign(name.text, None, reach);
                return;
            }
        };
        let known = items
            .iter()
            .all(|w| w.resolved)
            .then(|| items.iter().map(|w| w.text).collect::<Vec<_>>().join(" "));
        let is_list = known.is_some() && reach == Reach::Runs;
        self.assign(name.text, known, reach);
        if is_list {
            self.lists.insert(name.text.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str) -> ScriptWord<'_> {
        ScriptWord {
            text,
            resolved: true,
        }
    }

    fn value(vars: &ScriptVars, name: &str) -> Option<String> {
        match vars.get(name)? {
            VarValue::Known(v) => Some(v.to_string()),
            VarValue::Unknown => Some("?".to_string()),
        }
    }

    #[test]
    fn assignments_exports_and_unset() {
        let mut vars = ScriptVars::default();
        vars.command(&[], &[("A".into(), word("x y"))], Reach::Runs);
        vars.command(&[word("export"), word("-x"), word("B=1")], &[], Reach::Runs);
        vars.command(&[word("unset"), word("A")], &[], Reach::Runs);
        vars.command(&[word("read"), word("-r"), word("C")], &[], Reach::Runs);
        assert_eq!(value(&vars, "A").as_deref(), Some(""));
        assert_eq!(value(&vars, "B").as_deref(), Some("1"));
        assert_eq!(value(&vars, "C").as_deref(), Some("?"));
    }

    #[test]
    fn undecidable_values_are_unknown() {
        let mut vars = ScriptVars::default();
        let substituted = ScriptWord {
            text: "$(cat f)",
            resolved: false,
        };
        vars.command(&[], &[("A".into(), substituted)], Reach::Runs);
        vars.command(&[], &[("B".into(), word("1"))], Reach::Unknown);
        vars.command(&[], &[("C".into(), word("1"))], Reach::Skipped);
        assert_eq!(value(&vars, "A").as_deref(), Some("?"));
        assert_eq!(value(&vars, "B").as_deref(), Some("?"));
        assert_eq!(value(&vars, "C"), None);
    }

    #[test]
    fn for_loops_stand_for_their_list() {
        let mut vars = ScriptVars::default();
        vars.for_header(&[word("p"), word("in"), word("a"), word("b")], Reach::Runs);
        assert_eq!(value(&vars, "p").as_deref(), Some("a b"));
        assert!(vars.is_list("p"));
        vars.for_header(&[word("q")], Reach::Runs);
        assert_eq!(value(&vars, "q").as_deref(), Some("?"));
        vars.assign("p", Some("c".into()), Reach::Runs);
        assert!(!vars.is_list("p"));
    }
}
