//! CU137 cuda-repo-key-retired: a build trusts NVIDIA's retired CUDA
//! repository signing key (`7fa2af80.pub`, rotated on 27 April 2022) for the
//! CUDA apt repository it configures, and a later `apt-get update` then
//! fails with `NO_PUBKEY A4B469963BF863CC`. The keys, the repository's URL
//! and the fix (`cuda-keyring`) are data (`rules/build.toml`
//! `cuda_repo_key`).
//!
//! The build is read in order, over the stage and the stages it is built
//! `FROM`: a command that adds the retired key (`apt-key adv --fetch-keys
//! …/7fa2af80.pub`, `wget …/7fa2af80.pub | apt-key add -`, `apt-key adv
//! --recv-keys F60F4B3D7FA2AF80`) is reported when the CUDA repository is
//! configured by the file (a `deb …/compute/cuda/repos/…` line, a
//! `cuda-repo-*.deb`) and an `apt-get update` follows with no new key
//! (`3bf863cc.pub`, `cuda-keyring`) trusted and the repository not removed
//! in between. Bases that carry the repository themselves (`nvidia/cuda`,
//! NGC) stay quiet: whether they trust the new key depends on when the tag
//! was built.

use crate::checks::dockerfile::build_steps::built_stages;
use crate::checks::dockerfile::support::{rm_target, root_image};
use crate::checks::{Category, Doc, DockerfileContext, DockerfileRule, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::dockerfile::ast::Word;
use crate::dockerfile::model::{BaseImage, ImageRef, Reach, ShellCommand, Stage};
use crate::knowledge::build::{glob, BuildFacts, CudaRepoKey};
use crate::paths::basename;
use crate::source::Span;

pub static META: RuleMeta = RuleMeta {
    code: "CU137",
    name: "cuda-repo-key-retired",
    category: Category::Correctness,
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    summary: "The build trusts NVIDIA's retired CUDA repository key, so apt-get update fails",
    doc: Doc::Page,
};

pub struct CudaRepoKeyRetired;

/// What one command of the build does to the CUDA repository's trust.
#[derive(Debug, PartialEq, Eq)]
enum KeyStep {
    /// Trusts the retired key; the repository path it names, if any
    /// (`ubuntu1804/x86_64`).
    AddsRetiredKey(Option<String>),
    /// Trusts the new key (its file, id, or the keyring package).
    TrustsNewKey,
    /// Writes the CUDA repository into apt's sources.
    ConfiguresRepository,
    /// Deletes a CUDA repository list.
    RemovesRepository,
    /// `apt-get update`.
    Updates,
    Other,
}

/// The `<distro>/<arch>` of a CUDA repository URL, when written out.
fn repository_of(url: &str, key: &CudaRepoKey) -> Option<String> {
    let after = url.split_once(key.repo_path.as_str())?.1;
    let mut parts = after.split('/');
    let (distro, arch) = (parts.next()?, parts.next()?);
    let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (plain(distro) && plain(arch)).then(|| format!("{distro}/{arch}"))
}

fn is_retired_key_url(text: &str, key: &CudaRepoKey) -> bool {
    text.contains(key.repo_path.as_str()) && basename(text) == key.retired_key_file
}

fn is_retired_key_id(text: &str, key: &CudaRepoKey) -> bool {
    let id = text.trim_start_matches("0x").to_ascii_uppercase();
    key.retired_key_ids.contains(&id)
}

/// Whether `step`'s commands put a fetched key into apt's trust: `apt-key
/// add`/`adv`, `gpg --dearmor`/`--import`, or a write into a keyring path.
fn adds_to_apt(commands: &[ShellCommand]) -> bool {
    commands.iter().any(|command| {
        let words = command.program_words();
        let program = words.first().map_or("", |w| basename(&w.text));
        let has = |flag: &str| words.iter().any(|w| w.text == flag);
        (program == "apt-key" && (has("add") || has("adv")))
            || (program == "gpg" && (has("--dearmor") || has("--import")))
            || words
                .iter()
                .any(|w| w.text.contains("trusted.gpg") || w.text.contains("/keyrings/"))
    })
}

fn classify(command: &ShellCommand, step: &[ShellCommand], key: &CudaRepoKey) -> KeyStep {
    let words = command.program_words();
    let Some((program, args)) = words.split_first() else {
        return KeyStep::Other;
    };
    let program = basename(&program.text);
    let any = |test: &dyn Fn(&Word) -> bool| args.iter().any(test);
    // `apt-key del 7fa2af80` removes the retired key, and `apt-key adv --export KEY` (NVIDIA's old
    // recipes export the fetched key to check its sha256) or `list` read it: none of them adds one.
    if program == "apt-key"
        && any(&|w| {
            matches!(
                w.text.as_str(),
                "del"
                    | "export"
                    | "exportall"
                    | "list"
                    | "finger"
                    | "--export"
                    | "--list-keys"
                    | "--fingerprint"
            )
        })
    {
        return KeyStep::Other;
    }
    let new_key_id = key.new_key_id.to_ascii_uppercase();
    if any(&|w| {
        basename(&w.text) == key.new_key_file
            || w.text.contains(key.keyring_package.as_str())
            || w.text.trim_start_matches("0x").to_ascii_uppercase() == new_key_id
    }) {
        return KeyStep::TrustsNewKey;
    }
    if let Some(url) = args.iter().find(|w| is_retired_key_url(&w.text, key)) {
        let fetched_into_apt =
            program == "apt-key" || (matches!(program, "wget" | "curl") && adds_to_apt(step));
        if fetched_into_apt {
            return KeyStep::AddsRetiredKey(repository_of(&url.text, key));
        }
    }
    if program == "apt-key" && any(&|w| is_retired_key_id(&w.text, key)) {
        return KeyStep::AddsRetiredKey(None);
    }
    let removes = rm_target(command, |path| {
        let name = basename(path);
        name.starts_with("cuda") && name.ends_with(".list")
    })
    .is_some()
        || (program == "sed"
            && any(&|w| {
                w.text.contains("compute\\/cuda\\/repos") || w.text.contains(key.repo_path.as_str())
            })
            && any(&|w| w.text.ends_with("/d") || w.text.contains("/d;")));
    if removes {
        return KeyStep::RemovesRepository;
    }
    let configures = args.iter().any(|w| {
        let text = w.text.as_str();
        (text.contains(key.repo_path.as_str()) && !text.ends_with(".pub"))
            || (basename(text).starts_with("cuda-repo-") && text.ends_with(".deb"))
    });
    if configures && program != "apt-key" {
        return KeyStep::ConfiguresRepository;
    }
    let updates = matches!(program, "apt-get" | "apt" | "aptitude")
        && args.iter().any(|w| w.text == "update");
    if updates {
        return KeyStep::Updates;
    }
    KeyStep::Other
}

/// The stages `stage` is built `FROM`, root first, and `stage` last.
fn chain<'m>(ctx: &DockerfileContext<'m>, stage: &'m Stage) -> Vec<&'m Stage> {
    let mut out = vec![stage];
    let mut current = stage;
    while let BaseImage::Stage(parent) = current.base {
        let Some(parent) = ctx.model.stages.get(parent) else {
            break;
        };
        if out.iter().any(|s| std::ptr::eq(*s, parent)) {
            break;
        }
        out.push(parent);
        current = parent;
    }
    out.reverse();
    out
}

fn carries_repository(image: &ImageRef, key: &CudaRepoKey) -> bool {
    let name = match &image.registry {
        Some(registry) if registry != "docker.io" => format!("{registry}/{}", image.repository),
        _ => image.repository.clone(),
    };
    key.repository_bases
        .iter()
        .any(|pattern| glob(pattern, &name))
}

/// `ubuntu1804`-style name of an `ubuntu:18.04` base, for the advice.
fn repository_from_base(image: Option<&ImageRef>) -> Option<String> {
    let image = image?;
    let tag = image.tag.as_deref()?;
    let version: String = tag.chars().filter(|c| c.is_ascii_digit()).collect();
    let numeric = !version.is_empty() && tag.chars().all(|c| c.is_ascii_digit() || c == '.');
    match image.repository.as_str() {
        "ubuntu" if numeric => Some(format!("ubuntu{version}/x86_64")),
        "debian" if numeric => Some(format!("debian{version}/x86_64")),
        _ => None,
    }
}

impl DockerfileRule for CudaRepoKeyRetired {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &DockerfileContext<'_>, out: &mut Vec<Diagnostic>) {
        let key = &BuildFacts::embedded().cuda_repo_key;
        for stage in built_stages(ctx) {
            let root = root_image(ctx, stage);
            if root.is_some_and(|image| carries_repository(image, key)) {
                continue;
            }
            let mut pending: Vec<(Span, Option<String>)> = Vec::new();
            let (mut configured, mut new_key) = (false, false);
            for current in chain(ctx, stage) {
                let own = std::ptr::eq(current, stage);
                for step in &current.runs {
                    for command in &step.commands {
                        if command.reach == Reach::Skipped {
                            continue;
                        }
                        match classify(command, &step.commands, key) {
                            KeyStep::AddsRetiredKey(repository) if own && !new_key => {
                                pending.push((command.span, repository));
                            }
                            KeyStep::TrustsNewKey => {
                                new_key = true;
                                pending.clear();
                            }
                            KeyStep::ConfiguresRepository => configured = true,
                            KeyStep::RemovesRepository => configured = false,
                            KeyStep::Updates if configured => {
                                for (span, repository) in pending.drain(..) {
                                    let repository =
                                        repository.or_else(|| repository_from_base(root));
                                    out.push(finding(ctx, key, span, command.span, repository));
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
    }
}

fn finding(
    ctx: &DockerfileContext<'_>,
    key: &CudaRepoKey,
    span: Span,
    update: Span,
    repository: Option<String>,
) -> Diagnostic {
    let line = ctx.source.line_col(update.start).line;
    let (path, example) = match &repository {
        Some(repository) => (repository.clone(), String::new()),
        None => (
            "$distro/$arch".to_string(),
            " (`$distro/$arch` as in the repository line, e.g. `ubuntu2204/x86_64`)".to_string(),
        ),
    };
    let deb = &key.keyring_deb;
    Diagnostic::at(
        &META,
        span,
        format!(
            "this trusts NVIDIA's CUDA repository key {}, retired on {}: the repository is signed with {} now, so the `apt-get update` on line {line} fails with `NO_PUBKEY {}`",
            key.retired_key_file.trim_end_matches(".pub"),
            key.rotated,
            key.new_key_file.trim_end_matches(".pub"),
            key.new_key_id
        ),
    )
    .with_help(format!(
        "install NVIDIA's keyring package instead of the key: `wget {}{path}/{deb} && dpkg -i {deb}`{example}; it adds the new key and the repository's list, so drop the file's own `deb …{}…` line (apt refuses two entries for one repository with different Signed-By)",
        key.repo_url, key.repo_path
    ))
    .with_source(key.source.clone())
}
