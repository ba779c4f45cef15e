//! The images one `cudalint image` run scans: the references on the command line, then those of
//! `--from-file` (one a line), each once, and of them the shard this process takes (`--shard I/N`, or
//! `--shard-count N` with the index a Kubernetes Indexed Job sets in `JOB_COMPLETION_INDEX`).
//!
//! A reference belongs to shard `sha256(reference) mod N` (the first 8 bytes of the digest, big
//! endian), the reference as written with its surrounding blanks trimmed. A hash rather than the
//! position in the list, because it depends on nothing but the reference: the shards of a list cover
//! it exactly once however each process ordered or filtered its copy of the list (a registry listing
//! taken by every pod at a slightly different moment), an image added to the list moves no other
//! image to another shard (a shard's own layer cache and its code-scanning category stay with the
//! same images from night to night), and a shard re-run scans the same images. The price is balance:
//! shards differ by a few per cent on a large list (binomially: 10,000 images in 8 shards, 1,250 ± 33),
//! and a short list can leave a shard empty, which is a clean run, not an error.
//!
//! Each shard scans its images in list order, starting `I/N` of the way into its own list and
//! wrapping around: shards started at once on one shared layer cache then begin among different base
//! images, where a list sorted by repository would have them all read the first base cold at once.

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context};
use sha2::{Digest, Sha256};

/// Set by Kubernetes in each pod of an Indexed Job: the pod's index, from 0.
pub const JOB_COMPLETION_INDEX: &str = "JOB_COMPLETION_INDEX";

/// One of `count` shards of a list, numbered from 0 (as `JOB_COMPLETION_INDEX` is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// `I/N` with `0 <= I < N`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let Some((index, count)) = text.split_once('/') else {
            return Err(format!("expected I/N (shard I of N, from 0), got `{text}`"));
        };
        let number = |part: &str, what: &str| {
            part.trim()
                .parse::<u64>()
                .map_err(|_| format!("the shard {what} `{part}` is not a whole number"))
        };
        Shard::new(number(index, "index")?, number(count, "count")?)
    }

    fn new(index: u64, count: u64) -> Result<Shard, String> {
        if count == 0 {
            return Err("the shard count must be at least 1".into());
        }
        if index >= count {
            return Err(format!(
                "shard {index} of {count} does not exist: shards are numbered from 0 to {}",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }

    /// Shard `JOB_COMPLETION_INDEX` of `count`, as each pod of a Kubernetes Indexed Job of `count`
    /// completions finds it; `index` is the variable's value, if it is set.
    pub fn from_job_index(index: Option<&str>, count: u64) -> anyhow::Result<Shard> {
        let Some(index) = index else {
            bail!(
                "--shard-count {count} takes this process's shard from ${JOB_COMPLETION_INDEX} \
                 (a Kubernetes Indexed Job sets it), which is not set; elsewhere use --shard I/{count}"
            );
        };
        let index = index.trim().parse::<u64>().map_err(|_| {
            anyhow::anyhow!("${JOB_COMPLETION_INDEX} is `{index}`, not a whole number")
        })?;
        Shard::new(index, count)
            .map_err(|reason| anyhow::anyhow!("${JOB_COMPLETION_INDEX}={index}: {reason}"))
    }

    /// Whether `reference` is in this shard.
    pub fn takes(&self, reference: &str) -> bool {
        shard_of(reference, self.count) == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The shard of `count` that `reference` belongs to (see the module's documentation).
pub fn shard_of(reference: &str, count: u64) -> u64 {
    let digest = Sha256::digest(reference.trim().as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first) % count
}

/// Where in its own list of `len` references `shard` starts scanning: `index/count` of the way in,
/// so that shards running at once on one shared cache start among different bases.
pub fn start_of(shard: Shard, len: usize) -> usize {
    let len = len as u128;
    (len * u128::from(shard.index) / u128::from(shard.count)) as usize
}

/// The references in a list file's text: one a line, surrounding blanks trimmed; blank lines are
/// skipped, and `#` starts a comment at the start of a line or after a blank.
pub fn parse_list(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            let comment = line
                .char_indices()
                .find(|&(at, c)| c == '#' && (at == 0 || line[..at].ends_with(char::is_whitespace)))
                .map_or(line.len(), |(at, _)| at);
            line[..comment].trim()
        })
        .filter(|reference| !reference.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The references of the list file `path` (`-`: standard input).
pub fn read_list(path: &Path) -> anyhow::Result<Vec<String>> {
    let text = if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("--from-file -: cannot read standard input")?;
        text
    } else {
        std::fs::read_to_string(path)
            .with_context(|| format!("--from-file: cannot read {}", path.display()))?
    };
    Ok(parse_list(&text))
}

/// `references` each once (its first occurrence), in order, trimmed.
pub fn dedup(references: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    references
        .into_iter()
        .map(|reference| reference.trim().to_owned())
        .filter(|reference| seen.insert(reference.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_from_zero_and_refuse_what_does_not_exist() {
        assert_eq!(Shard::parse("0/4"), Ok(Shard { index: 0, count: 4 }));
        assert_eq!(Shard::parse("3/4"), Ok(Shard { index: 3, count: 4 }));
        assert!(Shard::parse("4/4").unwrap_err().contains("from 0 to 3"));
        assert!(Shard::parse("0/0").is_err());
        assert!(Shard::parse("1").is_err());
        assert!(Shard::parse("a/4").is_err());
        assert!(Shard::parse("-1/4").is_err());
    }

    #[test]
    fn the_job_index_names_the_shard() {
        assert_eq!(
            Shard::from_job_index(Some("2"), 3).unwrap(),
            Shard { index: 2, count: 3 }
        );
        let unset = Shard::from_job_index(None, 3).unwrap_err().to_string();
        assert!(unset.contains("JOB_COMPLETION_INDEX") && unset.contains("--shard I/3"));
        assert!(Shard::from_job_index(Some("3"), 3).is_err());
        assert!(Shard::from_job_index(Some("x"), 3).is_err());
    }

    #[test]
    fn every_reference_is_in_exactly_one_shard_whatever_the_order() {
        let references: Vec<String> = (0..1000).map(|i| format!("registry/app:{i}")).collect();
        for count in [1, 2, 3, 8, 16] {
            let shards: Vec<Shard> = (0..count).map(|index| Shard { index, count }).collect();
            let mut sizes = vec![0usize; count as usize];
            for reference in &references {
                let owners: Vec<&Shard> = shards
                    .iter()
                    .filter(|shard| shard.takes(reference))
                    .collect();
                assert_eq!(owners.len(), 1, "{reference} in {count} shards");
                sizes[owners[0].index as usize] += 1;
                // Blanks around a reference do not move it.
                assert!(owners[0].takes(&format!("  {reference}\t")));
            }
            // Balanced within a few standard deviations of the binomial spread.
            let mean = 1000.0 / count as f64;
            let spread = (1000.0 * (1.0 / count as f64) * (1.0 - 1.0 / count as f64)).sqrt();
            for size in sizes {
                assert!(
                    (size as f64 - mean).abs() <= 4.0 * spread + 1.0,
                    "{size} vs {mean}"
                );
            }
        }
        // A fixed function of the text: the same in every process and every release.
        assert_eq!(shard_of("nvidia/cuda:12.4.1-runtime-ubuntu22.04", 1), 0);
        assert_eq!(
            shard_of("a", 1 << 32),
            u64::from_be_bytes([0xca, 0x97, 0x81, 0x12, 0xca, 0x1b, 0xbd, 0xca]) % (1 << 32)
        );
    }

    #[test]
    fn shards_start_spread_over_their_lists() {
        let shard = |index| Shard { index, count: 4 };
        assert_eq!(
            (0..4).map(|i| start_of(shard(i), 100)).collect::<Vec<_>>(),
            [0, 25, 50, 75]
        );
        assert_eq!(start_of(shard(3), 0), 0);
        assert_eq!(start_of(shard(3), 1), 0);
    }

    #[test]
    fn list_files_take_one_reference_a_line_with_comments() {
        let text = "# nightly\n\nnvidia/cuda:12.4.1-base-ubuntu22.04\n  docker-archive:/x/a#1.tar  # the app\n\t#indented comment\noci:/layouts/b:v1\r\n";
        assert_eq!(
            parse_list(text),
            [
                "nvidia/cuda:12.4.1-base-ubuntu22.04",
                "docker-archive:/x/a#1.tar",
                "oci:/layouts/b:v1"
            ]
        );
        assert!(parse_list("\n# only comments\n   \n").is_empty());
    }

    #[test]
    fn duplicates_keep_their_first_place() {
        let list = ["b", "a", " b ", "c", "a"].map(String::from);
        assert_eq!(dedup(list), ["b", "a", "c"]);
    }
}
