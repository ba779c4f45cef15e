//! Build and target platforms (`os/arch[/variant]`) and the automatic
//! platform ARGs BuildKit derives from them.
//!
//! BuildKit defines `BUILDPLATFORM`, `TARGETARCH` and their friends before
//! the first FROM on its own (`dockerfile2llb/platform.go`, `defaultArgs`):
//! FROM lines see them without any ARG, and a stage sees one only after it
//! declares `ARG TARGETARCH` without a default. The build platform is the
//! machine's; the target platform is `--platform`, else the build platform.
//! Platform strings are normalised the way containerd's `platforms.Normalize`
//! does, so `aarch64` is `arm64` and `arm64/v8` is plain `arm64`.

use std::fmt;

/// One platform, normalised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Platform {
    pub os: String,
    pub arch: String,
    /// Empty when the architecture has no variant (or its default one).
    pub variant: String,
}

impl Platform {
    /// `os/arch[/variant]`, as `docker build --platform` takes it.
    pub fn parse(text: &str) -> Result<Platform, String> {
        let parts: Vec<&str> = text.trim().split('/').collect();
        let (os, arch, variant) = match parts.as_slice() {
            [os, arch] => (*os, *arch, ""),
            [os, arch, variant] => (*os, *arch, *variant),
            _ => {
                return Err(format!(
                    "`{text}` is not a platform; expected os/arch[/variant], e.g. linux/amd64"
                ))
            }
        };
        if os.is_empty() || arch.is_empty() {
            return Err(format!("`{text}` has an empty os or architecture"));
        }
        Ok(Platform::normalised(os, arch, variant))
    }

    /// The platform of the machine cudalint runs on, as BuildKit would
    /// report it for a build there.
    pub fn host() -> Platform {
        Platform::normalised("linux", std::env::consts::ARCH, "")
    }

    /// containerd's `Normalize`: Go architecture names, default variants dropped.
    fn normalised(os: &str, arch: &str, variant: &str) -> Platform {
        let os = os.to_ascii_lowercase();
        let variant = variant.to_ascii_lowercase();
        let (arch, variant) = match arch.to_ascii_lowercase().as_str() {
            "x86_64" | "x86-64" | "amd64" => {
                let variant = if variant == "v1" {
                    String::new()
                } else {
                    variant
                };
                ("amd64".to_string(), variant)
            }
            "aarch64" | "arm64" => {
                let variant = match variant.as_str() {
                    "8" | "v8" | "v8.0" => String::new(),
                    _ => variant,
                };
                ("arm64".to_string(), variant)
            }
            "armhf" => ("arm".to_string(), "v7".to_string()),
            "armel" => ("arm".to_string(), "v6".to_string()),
            "arm" => {
                let variant = match variant.as_str() {
                    "" | "7" => "v7".to_string(),
                    "5" | "6" | "8" => format!("v{variant}"),
                    _ => variant,
                };
                ("arm".to_string(), variant)
            }
            "i386" | "i486" | "i586" | "i686" | "x86" => ("386".to_string(), variant),
            "powerpc64le" => ("ppc64le".to_string(), variant),
            "powerpc64" => ("ppc64".to_string(), variant),
            other => (other.to_string(), variant),
        };
        Platform { os, arch, variant }
    }
}

/// The host's platform: what a build gets without `--platform`.
impl Default for Platform {
    fn default() -> Self {
        Platform::host()
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.os, self.arch)?;
        if !self.variant.is_empty() {
            write!(f, "/{}", self.variant)?;
        }
        Ok(())
    }
}

/// The automatic ARGs and their values for a build on `build` for
/// `target`, producing the stage named `target_stage` (`TARGETSTAGE` is
/// `default` when no `--target` is given), in BuildKit's order.
pub fn automatic_args(
    build: &Platform,
    target: &Platform,
    target_stage: Option<&str>,
) -> Vec<(&'static str, String)> {
    vec![
        ("BUILDPLATFORM", build.to_string()),
        ("BUILDOS", build.os.clone()),
        ("BUILDOSVERSION", String::new()),
        ("BUILDARCH", build.arch.clone()),
        ("BUILDVARIANT", build.variant.clone()),
        ("TARGETPLATFORM", target.to_string()),
        ("TARGETOS", target.os.clone()),
        ("TARGETOSVERSION", String::new()),
        ("TARGETARCH", target.arch.clone()),
        ("TARGETVARIANT", target.variant.clone()),
        ("TARGETSTAGE", target_stage.unwrap_or("default").to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_normalises() {
        assert_eq!(
            Platform::parse("linux/amd64").unwrap().to_string(),
            "linux/amd64"
        );
        assert_eq!(
            Platform::parse("linux/aarch64").unwrap().to_string(),
            "linux/arm64"
        );
        assert_eq!(
            Platform::parse("linux/arm64/v8").unwrap().to_string(),
            "linux/arm64"
        );
        assert_eq!(
            Platform::parse("linux/arm").unwrap().to_string(),
            "linux/arm/v7"
        );
        assert!(Platform::parse("amd64").is_err());
        assert!(Platform::parse("linux/").is_err());
    }

    #[test]
    fn automatic_args_follow_the_platforms() {
        let build = Platform::parse("linux/amd64").unwrap();
        let target = Platform::parse("linux/arm/v7").unwrap();
        let args = automatic_args(&build, &target, None);
        let get = |name: &str| {
            args.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("BUILDARCH"), Some("amd64"));
        assert_eq!(get("TARGETPLATFORM"), Some("linux/arm/v7"));
        assert_eq!(get("TARGETVARIANT"), Some("v7"));
        assert_eq!(get("TARGETSTAGE"), Some("default"));
    }
}
