//! Where a package install's download cache stays out of the layer, per
//! cache manager (rules/cupti.toml `[hygiene]`): the commands of a RUN that
//! fill a cache, and the evidence that keeps it out: a cache-off flag, a
//! `config set` in this or an earlier RUN, the manager's cache-off variable, a
//! cache mount, or a removal or clean later in the same RUN. CU104 reports
//! the fills nothing keeps out.

use crate::checks::dockerfile::runtime_env::{self, Setting};
use crate::checks::dockerfile::support;
use crate::checks::DockerfileContext;
use crate::dockerfile::ast::{Command, Word};
use crate::dockerfile::model::{Reach, RunStep, ShellCommand, Stage};
use crate::knowledge::cupti::{CacheManager, Hygiene};
use crate::paths::basename;

/// A command of a RUN that fills a manager's cache.
pub struct Fill<'a> {
    pub manager: &'a CacheManager,
    /// Index of the command in the RUN.
    pub position: usize,
    /// The subcommand word (`install`, `add`, `sync`), where flags go.
    pub subcommand: Option<&'a Word>,
    /// The command itself turns the cache off (`--no-cache-dir`).
    pub flagged_off: bool,
}

/// What the shipped chain's RUNs, in build order, say about caches.
pub struct CacheEvidence<'a> {
    hygiene: &'a Hygiene,
    settings: Vec<Setting<'a>>,
    /// Managers whose cache a `config set` turned off for later RUNs
    /// (`pip config set global.no-cache-dir …`).
    configured_off: Vec<&'a str>,
    /// `USER` instructions of the chain: instruction index, and whether the
    /// user is root (`None`: not known here, e.g. a variable).
    users: Vec<(usize, Option<bool>)>,
}

impl<'a> CacheEvidence<'a> {
    pub fn new(ctx: &'a DockerfileContext<'_>, stages: &'a [&'a Stage]) -> Self {
        let users = runtime_env::chain_instructions(ctx, stages)
            .filter_map(|(_, index, instruction)| match &instruction.command {
                Command::User(user) => Some((index, user_is_root(&user.text))),
                _ => None,
            })
            .collect();
        Self {
            hygiene: &ctx.knowledge.cupti.hygiene,
            settings: runtime_env::settings(ctx, stages),
            configured_off: Vec::new(),
            users,
        }
    }

    /// Whether `step` may run as root: the last USER before it says so, or
    /// says something unknown, or there is none (the base images this rule
    /// knows run as root).
    fn may_run_as_root(&self, step: &RunStep) -> bool {
        self.users
            .iter()
            .rev()
            .find(|(index, _)| *index < step.instruction)
            .is_none_or(|(_, root)| root.unwrap_or(true))
    }

    /// The commands of `step` that fill a cache, in order, after noting the
    /// step's cache configuration (which holds from this RUN on).
    pub fn fills<'s>(&mut self, step: &'s RunStep) -> Vec<Fill<'s>>
    where
        'a: 's,
    {
        // Only managers with such settings are asked (a command's program
        // is found per manager asked).
        let configurable = || {
            self.hygiene
                .managers
                .iter()
                .filter(|m| !m.no_cache_config.is_empty())
        };
        for command in &step.commands {
            for manager in configurable() {
                let configs = manager
                    .no_cache_config
                    .iter()
                    .map(|key| format!("config set {key}"));
                if subcommand_among(command, manager, configs).is_some() {
                    self.configured_off.push(manager.name.as_str());
                }
            }
        }
        cache_fills(self.hygiene, step)
    }

    /// The directory the manager's cache variable (`POETRY_CACHE_DIR`)
    /// moves its cache to, as an ENV/ARG before `step` sets it.
    fn cache_dir(&self, step: &RunStep, manager: &CacheManager) -> Option<&'a str> {
        let var = manager.cache_dir_env.as_deref()?;
        self.settings
            .iter()
            .rev()
            .find(|s| s.instruction < step.instruction && s.key == var)
            .map(|s| s.value)
    }

    /// Something keeps `fill`'s cache out of the layer of `step`, or the
    /// cache it leaves is the install itself (uv's `symlink` link mode).
    pub fn kept_out(&self, step: &RunStep, fill: &Fill<'_>) -> bool {
        let manager = fill.manager;
        links_into_cache(&self.settings, step, fill)
            || fill.flagged_off
            || self.configured_off.contains(&manager.name.as_str())
            || step
                .cache_mount_targets
                .iter()
                // A mount under /root/ catches nothing when another user's
                // ~/.cache is where the cache lands.
                .filter(|t| !t.starts_with("/root/") || self.may_run_as_root(step))
                .any(|t| manager.is_covered_by_mount(t))
            || env_turns_off(&self.settings, step, fill.position, manager)
            || cleaned_later(manager, step, fill.position, self.cache_dir(step, manager))
    }
}

/// The commands of `step` that fill a cache: the model's package installs,
/// and the other cache-filling subcommands a manager lists, except in a
/// shell branch the build does not take.
fn cache_fills<'a>(hygiene: &'a Hygiene, step: &'a RunStep) -> Vec<Fill<'a>> {
    let mut found: Vec<Fill<'a>> = Vec::new();
    for install in &step.installs {
        let Some(manager) = hygiene.for_installs_by(install.manager.name()) else {
            continue;
        };
        let Some(command) = step.commands.get(install.command) else {
            continue;
        };
        let last_word = install.subcommand.rsplit(' ').next().unwrap_or("");
        found.push(Fill {
            manager,
            position: install.command,
            subcommand: command
                .words
                .iter()
                .skip(command.program)
                .find(|w| w.text == last_word),
            flagged_off: install.no_cache && !manager.no_cache_flags.is_empty()
                || manager.no_cache_flags.iter().any(|f| install.has_option(f)),
        });
    }
    for (position, command) in step.commands.iter().enumerate() {
        if found.iter().any(|f| f.position == position) {
            continue;
        }
        for manager in hygiene.managers.iter().filter(|m| !m.also_fills.is_empty()) {
            if let Some(sub) =
                subcommand_among(command, manager, manager.also_fills.iter().cloned())
            {
                let flagged_off = command.words.iter().any(|w| {
                    manager.no_cache_flags.iter().any(|f| {
                        w.text == *f
                            || w.text
                                .strip_prefix(f.as_str())
                                .is_some_and(|r| r.starts_with('='))
                    })
                });
                found.push(Fill {
                    manager,
                    position,
                    subcommand: Some(sub),
                    flagged_off,
                });
                break;
            }
        }
    }
    // A command in a shell branch the build does not take fills nothing.
    found.retain(|f| {
        step.commands
            .get(f.position)
            .is_some_and(|command| command.reach != Reach::Skipped)
    });
    found.sort_by_key(|f| f.position);
    found
}

/// Whether `command` fills `manager`'s cache through one of its
/// non-install subcommands (`apt-get update`).
pub fn fills_with(command: &ShellCommand, manager: &CacheManager) -> bool {
    subcommand_among(command, manager, manager.also_fills.iter().cloned()).is_some()
}

/// Where `command` runs `manager` (its program, or `python -m <module>`)
/// with one of `subcommands` (`"cache purge"`: several words), the
/// subcommand's last word. Options between the words are skipped.
fn subcommand_among<'c>(
    command: &'c ShellCommand,
    manager: &CacheManager,
    subcommands: impl Iterator<Item = String>,
) -> Option<&'c Word> {
    let words = command.program_words();
    let (program, rest) = words.split_first()?;
    let program = basename(&program.text);
    let rest = if manager.is_program(program) {
        rest
    } else if manager.is_module_runner(program) {
        let module = manager.module.as_deref()?;
        let at = rest
            .iter()
            .position(|w| !w.text.starts_with('-') || w.text == "-m")?;
        if rest.get(at)?.text != "-m" || rest.get(at + 1)?.text != module {
            return None;
        }
        rest.get(at + 2..)?
    } else {
        return None;
    };
    let mut plain = rest.iter().filter(|w| !w.text.starts_with('-'));
    let first: Vec<&Word> = plain.by_ref().take(3).collect();
    for sub in subcommands {
        let expected: Vec<&str> = sub.split_whitespace().collect();
        let key_only = |w: &'c Word| w.text.split('=').next().unwrap_or("");
        let matches = expected.len() <= first.len()
            && expected
                .iter()
                .zip(&first)
                .all(|(e, w)| w.text == *e || key_only(w) == *e);
        if matches {
            return first.get(expected.len().checked_sub(1)?).copied();
        }
    }
    None
}

/// The install runs with its cache off through the manager's variable: the
/// command's own assignment, an `export` earlier in the RUN, or an ENV/ARG
/// before it.
fn env_turns_off(
    settings: &[Setting<'_>],
    step: &RunStep,
    position: usize,
    manager: &CacheManager,
) -> bool {
    let Some(var) = manager.no_cache_env.as_deref() else {
        return false;
    };
    // An unknown value (a variable, an ARG without default) may well turn it
    // off; staying quiet is the safe side.
    variable_at(settings, step, position, var)
        .is_some_and(|value| value.contains('$') || manager.env_disables(&value))
}

/// The value `var` has for the command at `position` of `step`: the
/// command's own assignment, else an `export` earlier in the RUN, else the
/// last ENV/ARG before the RUN (a known parent image's ENV included).
fn variable_at(
    settings: &[Setting<'_>],
    step: &RunStep,
    position: usize,
    var: &str,
) -> Option<String> {
    let command = step.commands.get(position)?;
    if let Some((_, value)) = command.assignments.iter().find(|(k, _)| k == var) {
        return Some(value.clone());
    }
    let exported = step.commands.iter().take(position).rev().find_map(|c| {
        let export = c.words.first().is_some_and(|w| w.text == "export");
        c.words.iter().skip(1).filter(|_| export).find_map(|w| {
            w.text
                .split_once('=')
                .filter(|(k, _)| *k == var)
                .map(|(_, v)| v.to_string())
        })
    });
    if exported.is_some() {
        return exported;
    }
    settings
        .iter()
        .rev()
        .find(|s| s.instruction < step.instruction && s.key == var)
        .map(|s| s.value.to_string())
}

/// uv installs packages by linking their files from its cache. In `symlink`
/// link mode the environment's files are symlinks into the cache, so the
/// cache is the install, not a leftover: removing it (or `--no-cache`,
/// which links from a temporary cache) breaks every package. uv settings
/// reference, `link-mode`: "clearing the cache (`uv cache clean`) will break
/// all installed packages" (https://docs.astral.sh/uv/reference/settings/#link-mode).
const SYMLINKING_MANAGER: &str = "uv";
const LINK_MODE_FLAG: &str = "--link-mode";
const LINK_MODE_ENV: &str = "UV_LINK_MODE";
const SYMLINK_MODE: &str = "symlink";

/// Whether `fill` installs by symlinking into its cache: the flag on the
/// command (which wins), else `UV_LINK_MODE` as the command sees it.
fn links_into_cache(settings: &[Setting<'_>], step: &RunStep, fill: &Fill<'_>) -> bool {
    if fill.manager.name != SYMLINKING_MANAGER {
        return false;
    }
    let Some(command) = step.commands.get(fill.position) else {
        return false;
    };
    let flag = command.words.iter().enumerate().find_map(|(at, word)| {
        if word.text == LINK_MODE_FLAG {
            return Some(command.words.get(at + 1).map(|w| w.text.as_str()));
        }
        word.text
            .strip_prefix(LINK_MODE_FLAG)
            .and_then(|rest| rest.strip_prefix('='))
            .map(Some)
    });
    match flag {
        Some(value) => value == Some(SYMLINK_MODE),
        None => variable_at(settings, step, fill.position, LINK_MODE_ENV)
            .is_some_and(|value| value == SYMLINK_MODE),
    }
}

/// `USER root`, `USER 0`, `USER root:root`; `None` for a variable.
fn user_is_root(user: &str) -> Option<bool> {
    if user.contains('$') {
        return None;
    }
    let name = user.split(':').next().unwrap_or(user).trim();
    Some(name == "root" || name == "0")
}

/// Whether any command of `step` removes or cleans `manager`'s cache.
pub fn cleans(manager: &CacheManager, step: &RunStep) -> bool {
    step.commands.iter().any(|command| {
        support::rm_target(command, |target| manager.is_removed_by(target)).is_some()
            || subcommand_among(command, manager, manager.clean.iter().cloned()).is_some()
    })
}

/// A removal or clean of the cache after the install, in the same RUN;
/// `moved_to` is where the manager's cache variable puts it, if set.
fn cleaned_later(
    manager: &CacheManager,
    step: &RunStep,
    position: usize,
    moved_to: Option<&str>,
) -> bool {
    let removes = |target: &str| {
        manager.is_removed_by(target)
            || moved_to.is_some_and(|dir| {
                let dir = dir.trim_end_matches('/');
                let target = target.trim_end_matches("/*").trim_end_matches('/');
                !dir.is_empty() && (target == dir || dir.starts_with(&format!("{target}/")))
            })
    };
    step.commands.iter().skip(position + 1).any(|command| {
        support::rm_target(command, removes).is_some()
            || subcommand_among(command, manager, manager.clean.iter().cloned()).is_some()
    })
}
