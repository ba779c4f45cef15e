//! Byte counts as people read them. The bottom of the crate: rules, renderers and commands all print
//! sizes, and none of them should import another layer for it.

/// `1.5 GB`, `12 kB`, `512 B` (decimal units, as docker prints them).
pub fn human_bytes(bytes: u64) -> String {
    scaled(bytes, 1000.0, &["B", "kB", "MB", "GB", "TB"])
}

/// `1.5 GiB`, `12.0 KiB`, `512 B` (binary units, as build contexts are counted).
pub fn human_bytes_binary(bytes: u64) -> String {
    scaled(bytes, 1024.0, &["B", "KiB", "MiB", "GiB"])
}

fn scaled(bytes: u64, step: f64, units: &[&str]) -> String {
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= step && unit < units.len() - 1 {
        value /= step;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_and_binary() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1_500_000_000), "1.5 GB");
        assert_eq!(human_bytes_binary(2048), "2.0 KiB");
    }
}
