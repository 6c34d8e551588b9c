//! TSIG key files (`KEY_DIR/<key>.key`, and each server's `rndc.key`): a BIND `key` clause
//! exactly as `tsig-keygen` writes it, so `nsupdate -k`, `rndc -k` and `named` all read it,
//! preceded in routerd's key files by one comment line saying where the secret came from
//! (the clause's two inner lines are indented with a tab, as `tsig-keygen` does):
//!
//! ```text
//! # routerd: secret generated
//! key "routerd-update" {
//!     algorithm hmac-sha256;
//!     secret "3q2+7w==…";
//! };
//! ```

use std::fmt;

use data_encoding::BASE64;

use crate::artifacts::TsigAlgorithm;

/// The prefix of the comment line recording a key file's secret source.
pub(crate) const SOURCE_PREFIX: &str = "# routerd: secret ";

/// How many random bytes a generated secret has: the HMAC-SHA-256 output size, what
/// `tsig-keygen -a hmac-sha256` makes.
pub const GENERATED_SECRET_BYTES: usize = 32;

/// A BIND `key` clause: a name, an algorithm and a base64 secret.
///
/// `Debug` does not show the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyClause {
    name: String,
    algorithm: TsigAlgorithm,
    secret: String,
}

/// Why a key clause cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The name is not a plain name (letters, digits, `-`, `_`, `.`; not starting with `.`).
    #[error("key name {0:?} is not a plain name (letters, digits, '-', '_', '.')")]
    Name(String),
    /// The secret is not base64 (RFC 4648 §4, padded) or is empty.
    #[error("the secret of key {0:?} is not base64")]
    Secret(String),
    /// The system's random source failed.
    #[error("no random bytes for key {name:?}: {message}")]
    Random {
        /// The key.
        name: String,
        /// getrandom's words.
        message: String,
    },
}

impl KeyClause {
    /// The clause of key `name` with `algorithm` and the base64 `secret`.
    ///
    /// Errors: [`KeyError::Name`], [`KeyError::Secret`].
    pub fn new(name: &str, algorithm: TsigAlgorithm, secret: &str) -> Result<Self, KeyError> {
        if !is_plain_name(name) {
            return Err(KeyError::Name(name.to_owned()));
        }
        if !is_base64(secret) {
            return Err(KeyError::Secret(name.to_owned()));
        }
        Ok(Self { name: name.to_owned(), algorithm, secret: secret.to_owned() })
    }

    /// A new key `name` with [`GENERATED_SECRET_BYTES`] random bytes from the system
    /// (getrandom(2)).
    ///
    /// Errors: [`KeyError::Name`], [`KeyError::Random`].
    pub fn generate(name: &str, algorithm: TsigAlgorithm) -> Result<Self, KeyError> {
        let mut bytes = [0u8; GENERATED_SECRET_BYTES];
        getrandom::fill(&mut bytes)
            .map_err(|e| KeyError::Random { name: name.to_owned(), message: e.to_string() })?;
        Self::new(name, algorithm, &BASE64.encode(&bytes))
    }

    /// The key's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key's algorithm.
    pub fn algorithm(&self) -> TsigAlgorithm {
        self.algorithm
    }

    /// The secret, base64 as in the file: for the one reader that needs it (a signer, an rndc
    /// client).
    pub fn secret_base64(&self) -> &str {
        &self.secret
    }

    /// The clause as `tsig-keygen` writes it, ending with a line break.
    pub fn render(&self) -> String {
        format!(
            "key \"{}\" {{\n\talgorithm {};\n\tsecret \"{}\";\n}};\n",
            self.name, self.algorithm, self.secret
        )
    }

    /// The first `key` clause of `text` as `tsig-keygen` writes it (comments allowed), if it
    /// has a name, a supported algorithm and a base64 secret: read by the wire client's
    /// parser ([`crate::wire::TsigKey::parse_key_file`]), the one key-file reader of the crate.
    pub fn parse(text: &str) -> Option<Self> {
        let key = crate::wire::TsigKey::parse_key_file(text).ok()?;
        Self::new(&key.label(), key.algorithm, &key.secret_base64()).ok()
    }
}

impl fmt::Debug for KeyClause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyClause")
            .field("name", &self.name)
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

/// Where the secret of a routerd key file came from: its first line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SecretSource {
    /// `# routerd: secret inline` (also a file without the line).
    Inline,
    /// `# routerd: secret from <path>`.
    File(String),
    /// `# routerd: secret generated`.
    Generated,
}

impl SecretSource {
    /// The comment line, without its line break.
    pub fn line(&self) -> String {
        match self {
            Self::Inline => format!("{SOURCE_PREFIX}inline"),
            Self::File(path) => format!("{SOURCE_PREFIX}from {path}"),
            Self::Generated => format!("{SOURCE_PREFIX}generated"),
        }
    }

    fn parse(line: &str) -> Option<Self> {
        match line.strip_prefix(SOURCE_PREFIX)?.trim_end() {
            "inline" => Some(Self::Inline),
            "generated" => Some(Self::Generated),
            rest => rest.strip_prefix("from ").map(|p| Self::File(p.to_owned())),
        }
    }
}

/// The text of a routerd key file.
pub(crate) fn render_key_file(source: &SecretSource, clause: &KeyClause) -> String {
    format!("{}\n{}", source.line(), clause.render())
}

/// The source and clause of a key file; a file without the routerd line counts as inline.
pub(crate) fn parse_key_file(text: &str) -> Option<(SecretSource, KeyClause)> {
    let first = text.lines().next().unwrap_or_default();
    let source = SecretSource::parse(first).unwrap_or(SecretSource::Inline);
    Some((source, KeyClause::parse(text)?))
}

/// Whether `name` can name a key or a server and its files: ASCII letters, digits, `-`, `_`
/// and `.`, not empty, not starting with `.`, at most 63 bytes.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Whether `s` is non-empty padded base64 (RFC 4648 §4), what BIND takes as a secret.
pub(crate) fn is_base64(s: &str) -> bool {
    !s.is_empty() && BASE64.decode(s.as_bytes()).is_ok_and(|b| !b.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "ljxU0t8+3GA8F3N0TTbZ0Aau6Fsp0g/K4V9sMOJQ5vs=";

    #[test]
    fn a_clause_renders_as_tsig_keygen_writes_it_and_parses_back() {
        let k = KeyClause::new("k1", TsigAlgorithm::HmacSha256, SECRET).expect("valid");
        let text = k.render();
        assert_eq!(
            text,
            format!("key \"k1\" {{\n\talgorithm hmac-sha256;\n\tsecret \"{SECRET}\";\n}};\n")
        );
        assert_eq!(KeyClause::parse(&text), Some(k));
        assert!(!format!("{:?}", KeyClause::parse(&text)).contains(SECRET));
    }

    #[test]
    fn clauses_written_by_hand_parse_with_comments_and_any_layout() {
        let text = format!(
            "// rndc\n/* a\n comment */ key routerd-rndc {{ secret \"{SECRET}\"; # why\n \
             algorithm HMAC-SHA512; }};"
        );
        let k = KeyClause::parse(&text).expect("parses");
        assert_eq!((k.name(), k.algorithm()), ("routerd-rndc", TsigAlgorithm::HmacSha512));
        assert_eq!(k.secret_base64(), SECRET);
    }

    #[test]
    fn clauses_without_a_usable_secret_or_algorithm_do_not_parse() {
        let no_b64 = "key \"k\" { algorithm hmac-sha256; secret \"not base64!\"; };";
        let md5 = format!("key \"k\" {{ algorithm hmac-md5; secret \"{SECRET}\"; }};");
        let cut = format!("key \"k\" {{ algorithm hmac-sha256; secret \"{SECRET}");
        for text in [no_b64, &md5, &cut, "", "options { };"] {
            assert_eq!(KeyClause::parse(text), None, "{text}");
        }
    }

    #[test]
    fn key_files_keep_their_secret_source_on_the_first_line() {
        let k = KeyClause::new("k1", TsigAlgorithm::HmacSha256, SECRET).expect("valid");
        for source in [
            SecretSource::Inline,
            SecretSource::Generated,
            SecretSource::File("/etc/routerd/update.b64".into()),
        ] {
            let text = render_key_file(&source, &k);
            assert!(text.starts_with("# routerd: secret "), "{text}");
            assert_eq!(parse_key_file(&text), Some((source, k.clone())));
        }
        assert_eq!(parse_key_file(&k.render()), Some((SecretSource::Inline, k)));
    }

    #[test]
    fn generated_secrets_are_32_random_bytes() {
        let a = KeyClause::generate("k", TsigAlgorithm::HmacSha256).expect("random");
        let b = KeyClause::generate("k", TsigAlgorithm::HmacSha256).expect("random");
        assert_eq!(BASE64.decode(a.secret_base64().as_bytes()).map(|v| v.len()), Ok(32));
        assert_ne!(a.secret_base64(), b.secret_base64());
    }

    #[test]
    fn plain_names_exclude_paths_and_hidden_files() {
        for ok in ["k1", "routerd-update", "xfer.lab", "a_b"] {
            assert!(is_plain_name(ok), "{ok}");
        }
        for bad in ["", ".k", "a/b", "..", "a b", "k\"", &"x".repeat(64)] {
            assert!(!is_plain_name(bad), "{bad}");
        }
    }
}
