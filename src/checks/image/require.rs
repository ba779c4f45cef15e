//! `NVIDIA_REQUIRE_*` as the NVIDIA Container Toolkit evaluates them: in one variable,
//! space-separated alternatives are ORed and comma-separated constraints within an alternative are
//! ANDed; separate `NVIDIA_REQUIRE_*` variables are ANDed; a constraint is `name op value` with
//! `cuda`, `driver`, `arch` (versions) and `brand` (a string). Evaluated three-valued: a property
//! not known here (the GPU's brand, its architecture unless `--gpu` names it) makes its constraint
//! undecided rather than true or false.

use crate::knowledge::Version;

/// What a requirement comes to on the given host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Satisfied,
    Unsatisfied,
    /// Decided by something not known here (the GPU's brand or architecture).
    Undecided,
}

/// What is known of the host.
#[derive(Clone, Debug, Default)]
pub struct HostProperties {
    /// The CUDA version the driver supports (`cuda` in constraints).
    pub cuda: Option<Version>,
    pub driver: Option<Version>,
    /// Compute capabilities of the GPUs (`arch`), when known.
    pub archs: Vec<Version>,
}

/// Evaluates the value of one `NVIDIA_REQUIRE_*` variable.
pub fn evaluate(requirement: &str, host: &HostProperties) -> Outcome {
    let alternatives: Vec<Outcome> = requirement
        .split_whitespace()
        .map(|alternative| all(alternative.split(',').map(|atom| constraint(atom, host))))
        .collect();
    if alternatives.is_empty() {
        return Outcome::Satisfied;
    }
    any(alternatives.into_iter())
}

/// AND, three-valued.
pub fn all(outcomes: impl Iterator<Item = Outcome>) -> Outcome {
    let mut result = Outcome::Satisfied;
    for outcome in outcomes {
        match outcome {
            Outcome::Unsatisfied => return Outcome::Unsatisfied,
            Outcome::Undecided => result = Outcome::Undecided,
            Outcome::Satisfied => {}
        }
    }
    result
}

/// OR, three-valued.
fn any(outcomes: impl Iterator<Item = Outcome>) -> Outcome {
    let mut result = Outcome::Unsatisfied;
    for outcome in outcomes {
        match outcome {
            Outcome::Satisfied => return Outcome::Satisfied,
            Outcome::Undecided => result = Outcome::Undecided,
            Outcome::Unsatisfied => {}
        }
    }
    result
}

const OPERATORS: [&str; 7] = ["==", "!=", ">=", "<=", "=", ">", "<"];

fn constraint(atom: &str, host: &HostProperties) -> Outcome {
    let Some((position, operator)) = OPERATORS
        .iter()
        .filter_map(|op| atom.find(op).map(|at| (at, *op)))
        .min_by_key(|(at, op)| (*at, std::cmp::Reverse(op.len())))
    else {
        return Outcome::Undecided;
    };
    let name = atom[..position].trim().to_ascii_lowercase();
    let value = atom[position + operator.len()..].trim();
    let compare = |have: Version| -> Outcome {
        let Some(want) = Version::parse(value) else {
            return Outcome::Undecided;
        };
        let ordering = have.cmp(&want);
        let holds = match operator {
            "=" | "==" => ordering.is_eq(),
            "!=" => !ordering.is_eq(),
            ">=" => ordering.is_ge(),
            "<=" => ordering.is_le(),
            ">" => ordering.is_gt(),
            "<" => ordering.is_lt(),
            _ => return Outcome::Undecided,
        };
        if holds {
            Outcome::Satisfied
        } else {
            Outcome::Unsatisfied
        }
    };
    match name.as_str() {
        "cuda" => host.cuda.map_or(Outcome::Undecided, compare),
        "driver" => host.driver.map_or(Outcome::Undecided, compare),
        // Every GPU of the container must meet it.
        "arch" if !host.archs.is_empty() => all(host.archs.iter().map(|arch| compare(*arch))),
        _ => Outcome::Undecided,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(cuda: &str, driver: &str) -> HostProperties {
        HostProperties {
            cuda: Version::parse(cuda),
            driver: Version::parse(driver),
            archs: Vec::new(),
        }
    }

    #[test]
    fn alternatives_and_constraints() {
        let image = "cuda>=12.9 brand=tesla,driver>=535,driver<536";
        assert_eq!(
            evaluate(image, &host("12.9", "575.51.03")),
            Outcome::Satisfied
        );
        // The data-center alternative holds only on a Tesla-brand GPU.
        assert_eq!(
            evaluate(image, &host("12.2", "535.104.05")),
            Outcome::Undecided
        );
        assert_eq!(
            evaluate(image, &host("11.4", "470.57.02")),
            Outcome::Unsatisfied
        );
        assert_eq!(evaluate("", &host("11.4", "470.57.02")), Outcome::Satisfied);
        assert_eq!(
            evaluate("cuda>=12.0", &HostProperties::default()),
            Outcome::Undecided
        );
        let mut gpus = host("12.2", "535.104.05");
        gpus.archs = vec![Version::parse("7.0").unwrap()];
        assert_eq!(evaluate("arch>=8.0", &gpus), Outcome::Unsatisfied);
        assert_eq!(evaluate("cuda==12.2", &gpus), Outcome::Satisfied);
        assert_eq!(evaluate("cuda!=12.2", &gpus), Outcome::Unsatisfied);
    }
}
