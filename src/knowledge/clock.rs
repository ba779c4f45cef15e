//! Today's date for facts that depend on it (image EOL and deletion, the age
//! of the built-in knowledge). `CUDALINT_TODAY=YYYY-MM-DD` overrides the
//! system clock, so tests and reviews can ask "as of when?" without waiting.

use std::time::{SystemTime, UNIX_EPOCH};

/// The environment variable that overrides today's date.
pub const TODAY_VAR: &str = "CUDALINT_TODAY";

/// A calendar date, ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: i32,
    pub month: u32,
    pub day: u32,
}

impl Date {
    /// `YYYY-MM-DD` (a `YYYY-MM` date is the first of the month).
    pub fn parse(text: &str) -> Option<Date> {
        let mut parts = text.trim().splitn(3, '-');
        let year = parts.next()?.parse().ok()?;
        let month = parts.next()?.parse().ok()?;
        let day = match parts.next() {
            Some(day) => day.get(..2).unwrap_or(day).parse().ok()?,
            None => 1,
        };
        ((1..=12).contains(&month) && (1..=31).contains(&day)).then_some(Date { year, month, day })
    }

    /// The same day `months` later (clamped to the 28th where needed).
    pub fn plus_months(self, months: u32) -> Date {
        let index = self.year * 12 + self.month as i32 - 1 + months as i32;
        Date {
            year: index.div_euclid(12),
            month: index.rem_euclid(12) as u32 + 1,
            day: self.day.min(28),
        }
    }

    /// Days since 1970-01-01 (proleptic Gregorian).
    pub fn days(self) -> i64 {
        let (y, m) = if self.month <= 2 {
            (self.year as i64 - 1, self.month as i64 + 9)
        } else {
            (self.year as i64, self.month as i64 - 3)
        };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let doy = (153 * m + 2) / 5 + self.day as i64 - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    fn from_days(days: i64) -> Date {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Date { year, month, day }
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Today: `CUDALINT_TODAY` when set to a date, else the system clock (UTC).
pub fn today() -> Date {
    if let Some(date) = std::env::var(TODAY_VAR).ok().and_then(|v| Date::parse(&v)) {
        return date;
    }
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    Date::from_days(seconds.div_euclid(86_400))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_add_months() {
        let d = Date::parse("2026-06-01").unwrap();
        assert_eq!(Date::from_days(d.days()), d);
        assert_eq!(d.plus_months(6).to_string(), "2026-12-01");
        assert_eq!(
            Date::parse("2026-11").unwrap().plus_months(2).to_string(),
            "2027-01-01"
        );
        assert_eq!(Date::parse("2026-11-23").unwrap().days() - d.days(), 175);
        assert_eq!(Date::parse("nope"), None);
    }
}
