//! cudalint as a Docker CLI plugin: the same binary, installed as
//! `docker-cudalint` in a `cli-plugins` directory, answers the Docker CLI's
//! metadata query and, when `docker cudalint …` runs it, drops the plugin
//! name the CLI passes first so the rest reaches the normal command line.
//! `cudalint install-plugin` puts the binary there.
//!
//! The protocol (docker/cli, `cli-plugins/manager` and
//! `cli-plugins/metadata`): the CLI runs `docker-NAME
//! docker-cli-plugin-metadata` and expects a JSON object with
//! `SchemaVersion` "0.1.0" and a non-empty `Vendor`; to run the plugin it
//! executes `docker-NAME NAME ARGS…`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::Serialize;

/// The plugin's name: `docker cudalint`.
pub const PLUGIN_NAME: &str = "cudalint";
/// The file name the Docker CLI looks for in its plugin directories.
pub const PLUGIN_FILE_NAME: &str = "docker-cudalint";
/// The argument the Docker CLI passes to ask a plugin for its metadata.
pub const METADATA_COMMAND: &str = "docker-cli-plugin-metadata";
/// Where plugins for every user go (one of the Docker CLI's system paths).
pub const SYSTEM_PLUGIN_DIR: &str = "/usr/local/lib/docker/cli-plugins";

/// The JSON object answered to [`METADATA_COMMAND`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Metadata {
    pub schema_version: &'static str,
    pub vendor: &'static str,
    pub version: &'static str,
    pub short_description: &'static str,
}

pub fn metadata() -> Metadata {
    Metadata {
        schema_version: "0.1.0",
        vendor: "cudalint",
        version: env!("CARGO_PKG_VERSION"),
        short_description: "Lint CUDA packaging in Dockerfiles",
    }
}

/// What a command line asks of the binary before normal parsing.
#[derive(Debug, PartialEq, Eq)]
pub enum Invocation {
    /// The Docker CLI asking for [`metadata`].
    Metadata,
    /// A normal run, with the plugin name removed when the Docker CLI ran
    /// it; `as_plugin` says so, for usage text (`docker cudalint …`).
    Run {
        args: Vec<OsString>,
        as_plugin: bool,
    },
}

/// Classify `args` (`argv[0]` first). The plugin name is dropped only when
/// the binary runs as `docker-cudalint`, so `cudalint cudalint` still lints
/// a file called `cudalint`.
pub fn classify(mut args: Vec<OsString>) -> Invocation {
    if args.get(1).is_some_and(|arg| arg == METADATA_COMMAND) {
        return Invocation::Metadata;
    }
    let as_plugin = args
        .first()
        .and_then(|argv0| Path::new(argv0).file_name())
        .is_some_and(|name| name == PLUGIN_FILE_NAME)
        && args.get(1).is_some_and(|arg| arg == PLUGIN_NAME);
    if as_plugin {
        args.remove(1);
    }
    Invocation::Run { args, as_plugin }
}

/// Where `install-plugin` puts the binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginScope {
    /// `$DOCKER_CONFIG/cli-plugins`, or `~/.docker/cli-plugins`.
    User,
    /// [`SYSTEM_PLUGIN_DIR`].
    System,
}

/// How `install-plugin` puts it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallMode {
    /// A symbolic link to this binary: upgrading cudalint upgrades the plugin.
    Symlink,
    /// A copy of this binary.
    Copy,
}

/// The plugin directory for `scope`, as the Docker CLI finds it.
pub fn plugin_dir(scope: PluginScope) -> anyhow::Result<PathBuf> {
    match scope {
        PluginScope::System => Ok(PathBuf::from(SYSTEM_PLUGIN_DIR)),
        PluginScope::User => {
            if let Some(config) = std::env::var_os("DOCKER_CONFIG").filter(|v| !v.is_empty()) {
                return Ok(PathBuf::from(config).join("cli-plugins"));
            }
            match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
                Some(home) => Ok(PathBuf::from(home).join(".docker").join("cli-plugins")),
                None => bail!("neither DOCKER_CONFIG nor HOME is set; cannot find the Docker CLI's plugin directory"),
            }
        }
    }
}

/// Install `binary` as `docker-cudalint` in `dir` (created if missing),
/// replacing an earlier plugin file or link there. Returns the installed
/// path.
pub fn install(binary: &Path, dir: &Path, mode: InstallMode) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let target = dir.join(PLUGIN_FILE_NAME);
    if let Ok(existing) = std::fs::symlink_metadata(&target) {
        if existing.is_dir() {
            bail!("{} is a directory; not replacing it", target.display());
        }
    }
    // Build the new file beside the target, then rename over it: the old
    // plugin stays whole until the new one is complete, and copying works
    // even when this binary is the installed copy.
    let staged = dir.join(format!(".{PLUGIN_FILE_NAME}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&staged);
    let staging = match mode {
        InstallMode::Symlink => symlink(binary, &staged),
        InstallMode::Copy => std::fs::copy(binary, &staged).map(|_| ()),
    };
    staging
        .and_then(|()| std::fs::rename(&staged, &target))
        .with_context(|| format!("cannot install {}", target.display()))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&staged);
        })?;
    Ok(target)
}

#[cfg(unix)]
fn symlink(original: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(original, link)
}

#[cfg(not(unix))]
fn symlink(_original: &Path, _link: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "symbolic links are not supported here; use --copy",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_plugin_name_is_dropped_only_when_run_as_the_plugin() {
        assert_eq!(
            classify(args(&["/p/docker-cudalint", "cudalint", "Dockerfile"])),
            Invocation::Run {
                args: args(&["/p/docker-cudalint", "Dockerfile"]),
                as_plugin: true
            }
        );
        assert_eq!(
            classify(args(&["cudalint", "cudalint"])),
            Invocation::Run {
                args: args(&["cudalint", "cudalint"]),
                as_plugin: false
            }
        );
        assert_eq!(
            classify(args(&["docker-cudalint", METADATA_COMMAND])),
            Invocation::Metadata
        );
    }
}
