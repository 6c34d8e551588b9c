//! pppd's secrets-file entries (pppd(8), AUTHENTICATION; `/etc/ppp/chap-secrets`,
//! `/etc/ppp/pap-secrets`): one line per entry, `client server secret [address ...]`, words
//! separated by white space, quoted with `"` or `'`, `\` escaping the next character, `#`
//! starting a comment outside quotes. A secret starting with `@` names a file holding it.

use crate::artifact::PppSecretValue;
use crate::secret::Secret;

/// The entry line routerd writes for `client` and `secret`: any server, any address.
///
/// Errors (a message that never contains the secret): a control character in either word,
/// which the line cannot carry, or an inline secret starting with `@`, which pppd would take
/// for a file name.
pub(crate) fn entry_line(client: &str, secret: &PppSecretValue) -> Result<String, String> {
    let word = match secret {
        PppSecretValue::Inline(s) => {
            let Some(value) = s.expose() else {
                return Err("the secret's value is not known to this process".into());
            };
            if value.starts_with('@') {
                return Err("an inline secret must not start with `@` (pppd reads `@path` as a \
                            file name); give the password in a file instead"
                    .into());
            }
            value.to_owned()
        }
        PppSecretValue::File(path) => {
            if !path.starts_with('/') {
                return Err(format!("the password file {path:?} is not an absolute path"));
            }
            format!("@{path}")
        }
    };
    if client.chars().any(char::is_control) {
        return Err(format!("the client {client:?} contains a control character"));
    }
    if word.chars().any(char::is_control) {
        return Err("the secret contains a control character".into());
    }
    Ok(format!("{} * {} *", quote(client), quote(&word)))
}

/// `s` in double quotes, `"` and `\` escaped.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The words of one secrets-file line, comments dropped.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&first) = chars.peek() else { break };
        if first == '#' {
            break;
        }
        let mut word = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = chars.next() {
            match (c, quote) {
                ('\\', _) => word.extend(chars.next()),
                (q, None) if q == '"' || q == '\'' => quote = Some(q),
                (q, Some(open)) if q == open => quote = None,
                (c, None) if c.is_whitespace() => break,
                (c, _) => word.push(c),
            }
        }
        out.push(word);
    }
    out
}

/// The client and secret of a block's lines: its one entry, comments and blank lines aside.
/// `None` when the block holds no entry or more than one.
pub(crate) fn parse_block(lines: &[String]) -> Option<(String, PppSecretValue)> {
    let mut entries = lines.iter().map(|l| words(l)).filter(|w| !w.is_empty());
    let entry = entries.next()?;
    if entries.next().is_some() || entry.len() < 3 {
        return None;
    }
    let secret = match entry[2].strip_prefix('@') {
        Some(path) => PppSecretValue::File(path.to_owned()),
        None => PppSecretValue::Inline(Secret::new(entry[2].clone())),
    };
    Some((entry[0].clone(), secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_through_quoting() {
        for password in ["plain", "with space", r#"quote " and \ backslash"#, "#not a comment"] {
            let secret = PppSecretValue::Inline(Secret::new(password));
            let line = entry_line("user@example.net", &secret).expect("line");
            let (client, back) = parse_block(std::slice::from_ref(&line)).expect("parses");
            assert_eq!(client, "user@example.net", "{line}");
            assert_eq!(back, secret, "{line}");
        }
        let file = PppSecretValue::File("/run/secrets/ppp".into());
        let line = entry_line("u", &file).expect("line");
        assert_eq!(line, r#""u" * "@/run/secrets/ppp" *"#);
        assert_eq!(parse_block(&[line]).map(|(_, s)| s), Some(file));
        // Hand-written forms pppd reads too.
        let hand = ["# comment".to_string(), "bob\t*  'p w' 10.0.0.1".into(), String::new()];
        let (client, secret) = parse_block(&hand).expect("parses");
        assert_eq!((client.as_str(), secret), ("bob", PppSecretValue::Inline(Secret::new("p w"))));
        assert_eq!(parse_block(&["a * x *".into(), "b * y *".into()]), None, "two entries");
        assert_eq!(parse_block(&["a *".into()]), None, "no secret");
    }

    #[test]
    fn secrets_the_file_cannot_carry_are_refused_without_showing_them() {
        for (client, password) in [("u", "@/etc/shadow"), ("u", "line\nbreak"), ("u\n", "pw0rd")] {
            let err = entry_line(client, &PppSecretValue::Inline(Secret::new(password)))
                .expect_err("refused");
            assert!(!err.contains(password), "{err}");
        }
        let err = entry_line("u", &PppSecretValue::File("relative".into())).expect_err("refused");
        assert!(err.contains("absolute"), "{err}");
    }
}
