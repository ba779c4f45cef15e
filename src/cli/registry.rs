//! The `image` command's flags for `registry:` references, apart from the other image flags so the
//! registry source's options are read in one place.

use std::time::Duration;

use clap::Args;

use crate::image::source::registry::{RegistryOptions, DEFAULT_JOBS};

#[derive(Debug, Args, Clone)]
pub struct RegistryArgs {
    /// registry: layer downloads at once (memory stays bounded whatever the layer sizes).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_JOBS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    pub jobs: usize,
    /// registry: give up on a registry that does not answer (connect, headers or a stalled download)
    /// within this many seconds (`30`, `2.5`, `90s`, `2m`).
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = parse_timeout)]
    pub timeout: Duration,
    /// registry: a host[:port] that may be reached over plain HTTP, when it refuses TLS (loopback
    /// registries always may). Repeatable.
    #[arg(long = "insecure-registry", value_name = "HOST[:PORT]")]
    pub insecure_registries: Vec<String>,
}

impl RegistryArgs {
    pub fn options(&self) -> RegistryOptions {
        RegistryOptions {
            jobs: self.jobs,
            timeout: self.timeout,
            insecure_registries: self.insecure_registries.clone(),
        }
    }
}

fn parse_timeout(text: &str) -> Result<Duration, String> {
    let (number, unit) = match text.strip_suffix('m') {
        Some(minutes) => (minutes, 60.0),
        None => (text.strip_suffix('s').unwrap_or(text), 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(value) if value > 0.0 && value * unit <= 86_400.0 => {
            Ok(Duration::from_secs_f64(value * unit))
        }
        _ => Err(format!(
            "{text:?}: expected a positive number of seconds (30, 2.5, 90s, 2m), at most a day"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_take_seconds_and_minutes() {
        assert_eq!(parse_timeout("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_timeout("2.5"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_timeout("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_timeout("2m"), Ok(Duration::from_secs(120)));
        for bad in ["0", "-1", "x", "", "2h", "100000"] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
    }
}
