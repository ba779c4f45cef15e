//! How old the built-in knowledge is. A linter whose catalogue is stale
//! gives wrong advice silently, so past [`MAX_AGE_DAYS`] cudalint says so
//! once per run (stderr in text mode, a SARIF notification).

use super::clock::Date;
use super::Knowledge;

/// Knowledge checked longer ago than this is called stale.
pub const MAX_AGE_DAYS: i64 = 180;

/// The one-line notice for `knowledge` as of `today`, or `None` while it is
/// fresh (or carries no check date).
pub fn stale_notice(knowledge: &Knowledge, today: Date) -> Option<String> {
    let checked = Date::parse(knowledge.checked.as_deref()?)?;
    let age = today.days() - checked.days();
    (age > MAX_AGE_DAYS).then(|| {
        format!(
            "the built-in CUDA knowledge was last checked on {checked} ({age} days ago): release, driver and EOL facts may be out of date; update cudalint or layer a newer catalogue with --knowledge FILE"
        )
    })
}
