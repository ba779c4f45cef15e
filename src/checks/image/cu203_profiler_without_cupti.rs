//! CU203 profiler-without-cupti: a framework that opens CUPTI with `dlopen` only when profiling
//! (TensorFlow, JAX, Nsight Systems; the list is data) is installed next to a CUDA runtime, and the
//! image holds no CUPTI of that runtime's major. Nothing fails at import; the profiler fails when
//! someone needs it.

use std::collections::BTreeSet;

use super::cu201_cupti_unresolvable::cupti_major;
use super::{ImageContext, ImageRule};
use crate::checks::{Category, Doc, FixAvailability, RuleMeta};
use crate::diagnostic::{Diagnostic, Severity};
use crate::image::facts::FsView;
use crate::image::inventory::LibraryFamily;

pub struct ProfilerWithoutCupti;

static META: RuleMeta = RuleMeta {
    code: "CU203",
    name: "profiler-without-cupti",
    category: Category::Correctness,
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    summary:
        "A framework that profiles through CUPTI is installed, and no CUPTI of the right major is",
    doc: Doc::Page,
};

/// `tensorflow-2.15.0.dist-info` → `tensorflow`; names compared as PEP 503 normalises them.
fn distribution_name(dist_info_dir: &str) -> Option<String> {
    let stem = dist_info_dir.strip_suffix(".dist-info")?;
    let name = stem.split_once('-').map_or(stem, |(name, _)| name);
    Some(normalize(name))
}

fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

/// The CUDA majors a framework needs CUPTI for: the one its name carries (`jax-cuda12-plugin`), or
/// else those of the CUDA runtimes in the image.
fn majors_for(name: &str, runtime_majors: &BTreeSet<u32>) -> BTreeSet<u32> {
    let from_name = name
        .split(['-', '_'])
        .find_map(|part| part.strip_prefix("cuda")?.parse::<u32>().ok());
    match from_name {
        Some(major) => BTreeSet::from([major]),
        None => runtime_majors.clone(),
    }
}

impl ImageRule for ProfilerWithoutCupti {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, ctx: &ImageContext<'_>, out: &mut Vec<Diagnostic>) {
        let inventory = &ctx.image.inventory;
        let runtime_majors: BTreeSet<u32> = inventory
            .cuda_runtimes()
            .filter_map(|library| library.cuda_major())
            .collect();
        let cupti_majors: BTreeSet<u32> = inventory
            .libraries
            .iter()
            .filter(|library| library.family == LibraryFamily::Cupti)
            .filter_map(|library| {
                let soname = library.soname.clone().unwrap_or_else(|| {
                    library
                        .path
                        .rsplit('/')
                        .next()
                        .unwrap_or_default()
                        .to_owned()
                });
                cupti_major(&soname)
            })
            .collect();
        let mut reported = BTreeSet::new();
        for (path, node) in ctx.image.report.fs.walk() {
            let distribution = distribution_name(path.rsplit('/').next().unwrap_or(path));
            for (index, framework) in ctx.content.cupti_on_demand().iter().enumerate() {
                let (found_as, package) = match &distribution {
                    Some(dist)
                        if framework
                            .distributions
                            .iter()
                            .any(|wanted| normalize(wanted) == *dist) =>
                    {
                        (dist.clone(), Some(dist.clone()))
                    }
                    _ if ctx.content.cupti_on_demand_path(index, path) => (path.to_owned(), None),
                    _ => continue,
                };
                let majors = majors_for(package.as_deref().unwrap_or(""), &runtime_majors);
                for major in majors.difference(&cupti_majors) {
                    if !reported.insert((framework.name.clone(), *major)) {
                        continue;
                    }
                    let cupti = ctx
                        .knowledge
                        .cupti
                        .majors
                        .iter()
                        .find(|entry| entry.cuda_major == *major);
                    let mut finding = ctx
                        .finding_at(
                            &META,
                            node.layer,
                            path,
                            format!(
                                "{} is installed (`{found_as}`) for CUDA {major}, and the image has no CUPTI for CUDA {major}: \
                                 its profiler fails when started",
                                framework.name
                            ),
                        )
                        .with_source(framework.source.clone());
                    finding = match cupti {
                        Some(entry) => finding
                            .with_help(format!(
                                "install pip `{}` or apt `{}` if the image is to be profiled; otherwise this is \
                                 safe to suppress",
                                entry.pip_package,
                                entry.apt_package.replace("{major}", &major.to_string()).replace("-{minor}", "-X")
                            ))
                            .with_source(entry.source.clone()),
                        None => finding.with_help(format!(
                            "install CUPTI for CUDA {major} if the image is to be profiled"
                        )),
                    };
                    out.push(finding);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_majors() {
        assert_eq!(
            distribution_name("tensorflow-2.15.0.dist-info").as_deref(),
            Some("tensorflow")
        );
        assert_eq!(
            distribution_name("jax_cuda12_plugin-0.4.30.dist-info").as_deref(),
            Some("jax-cuda12-plugin")
        );
        assert_eq!(distribution_name("tensorflow"), None);
        let runtimes = BTreeSet::from([11, 12]);
        assert_eq!(
            majors_for("jax-cuda13-plugin", &runtimes),
            BTreeSet::from([13])
        );
        assert_eq!(majors_for("tensorflow", &runtimes), runtimes);
    }
}
