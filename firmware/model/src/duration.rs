//! Go-style duration strings (`30s`, `5m`, `1h30m`, `1.5s`, `250ms`), as routerd configs have
//! always written them.
//!
//! Accepts what Go's `time.ParseDuration` accepts, except negative values: a sequence of decimal
//! numbers, each with an optional fraction and a required unit (`ns`, `us`/`µs`/`μs`, `ms`, `s`,
//! `m`, `h`); a lone `0` needs no unit. Pure function, no I/O.
//!
//! The binaries' duration flags (`routerd serve --resync`, `routerctl apply --confirm-timeout`)
//! parse with the same function, so a flag takes exactly what the config takes: it is a clap
//! value parser as it is (`value_parser = routerd_model::parse_duration`; [`DurationError`] is
//! `Error + Send + Sync`), and this crate does not depend on clap.

use std::time::Duration;

/// Why a duration string was rejected. Display is a lowercase message naming the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// The string is empty.
    #[error("duration is empty (write e.g. 30s, 5m or 1h)")]
    Empty,
    /// A leading minus sign.
    #[error("duration {0:?} is negative")]
    Negative(String),
    /// Not a number where one was expected.
    #[error("invalid duration {0:?} (write e.g. 30s, 5m, 1h30m)")]
    Invalid(String),
    /// A number without a unit.
    #[error("duration {0:?} is missing a unit (ns, us, ms, s, m or h)")]
    MissingUnit(String),
    /// A unit we do not know.
    #[error("duration {input:?} has unknown unit {unit:?} (use ns, us, ms, s, m or h)")]
    UnknownUnit {
        /// The whole string as written.
        input: String,
        /// The unit as written.
        unit: String,
    },
    /// Larger than [`Duration::MAX`].
    #[error("duration {0:?} is too large")]
    Overflow(String),
}

/// Parses a Go-style duration such as `1m30s` into a [`Duration`].
///
/// Errors: [`DurationError`] naming the input; negative durations are rejected.
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let s = input.strip_prefix('+').unwrap_or(input);
    if s.is_empty() {
        return Err(DurationError::Empty);
    }
    if s.starts_with('-') {
        return Err(DurationError::Negative(input.to_owned()));
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let mut rest = s;
    let mut total_ns: u128 = 0;
    while !rest.is_empty() {
        let (number, after_number) = split_number(rest);
        if number.is_empty() || number == "." {
            return Err(DurationError::Invalid(input.to_owned()));
        }
        let unit_len = after_number
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after_number.len());
        let (unit, after_unit) = after_number.split_at(unit_len);
        if unit.is_empty() && after_number.is_empty() {
            return Err(DurationError::MissingUnit(input.to_owned()));
        }
        if unit.is_empty() {
            return Err(DurationError::Invalid(input.to_owned()));
        }
        let scale = unit_nanos(unit).ok_or_else(|| DurationError::UnknownUnit {
            input: input.to_owned(),
            unit: unit.to_owned(),
        })?;
        let part =
            scaled(number, scale).ok_or_else(|| DurationError::Overflow(input.to_owned()))?;
        total_ns =
            total_ns.checked_add(part).ok_or_else(|| DurationError::Overflow(input.to_owned()))?;
        rest = after_unit;
    }
    let secs = u64::try_from(total_ns / 1_000_000_000)
        .map_err(|_| DurationError::Overflow(input.to_owned()))?;
    let nanos = u32::try_from(total_ns % 1_000_000_000).expect("invariant: below one second");
    Ok(Duration::new(secs, nanos))
}

/// Splits a leading `digits[.digits]` off `s`.
fn split_number(s: &str) -> (&str, &str) {
    let mut seen_dot = false;
    let end = s
        .char_indices()
        .find(|&(_, c)| {
            if c == '.' && !seen_dot {
                seen_dot = true;
                false
            } else {
                !c.is_ascii_digit()
            }
        })
        .map_or(s.len(), |(i, _)| i);
    s.split_at(end)
}

fn unit_nanos(unit: &str) -> Option<u128> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60 * 1_000_000_000,
        "h" => 3_600 * 1_000_000_000,
        _ => return None,
    })
}

/// `number` (digits with optional fraction) times `scale` nanoseconds, truncated.
fn scaled(number: &str, scale: u128) -> Option<u128> {
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    let whole: u128 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    let mut total = whole.checked_mul(scale)?;
    let mut divisor: u128 = 1;
    let mut frac_value: u128 = 0;
    for digit in frac.bytes().take(30) {
        frac_value = frac_value * 10 + u128::from(digit - b'0');
        divisor *= 10;
    }
    total = total.checked_add(frac_value.checked_mul(scale)? / divisor)?;
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_single_and_combined_units() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("10us"), Ok(Duration::from_micros(10)));
        assert_eq!(parse_duration("7ns"), Ok(Duration::from_nanos(7)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration(".5h"), Ok(Duration::from_secs(1800)));
    }

    #[test]
    fn rejects_missing_or_unknown_units_and_negatives() {
        assert_eq!(parse_duration("30"), Err(DurationError::MissingUnit("30".into())));
        assert_eq!(
            parse_duration("3d"),
            Err(DurationError::UnknownUnit { input: "3d".into(), unit: "d".into() })
        );
        assert_eq!(parse_duration("-1s"), Err(DurationError::Negative("-1s".into())));
        assert_eq!(parse_duration(""), Err(DurationError::Empty));
        assert_eq!(parse_duration("s"), Err(DurationError::Invalid("s".into())));
        assert_eq!(parse_duration("1..2s"), Err(DurationError::Invalid("1..2s".into())));
    }

    #[test]
    fn refuses_what_only_humantime_takes() {
        // The CLI flags parsed with humantime until issue 35; these must now fail there too.
        for text in ["1 minute", "2min", "1sec", "1d", "1h 30m", "1week"] {
            assert!(parse_duration(text).is_err(), "{text:?} accepted");
        }
    }

    #[test]
    fn the_error_is_usable_by_a_cli_value_parser() {
        fn boxable<E: std::error::Error + Send + Sync + 'static>(_: &E) {}
        boxable(&parse_duration("1 minute").expect_err("invalid"));
    }

    #[test]
    fn error_messages_are_lowercase_and_name_the_input() {
        let err = parse_duration("5 minutes").expect_err("invalid");
        assert_eq!(
            err.to_string(),
            "duration \"5 minutes\" has unknown unit \" minutes\" (use ns, us, ms, s, m or h)"
        );
    }
}
