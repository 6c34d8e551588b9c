//! TSIG keys (RFC 8945) and BIND's `key` clause, as `tsig-keygen` writes it and `named.conf`,
//! `nsupdate -k` and `rndc` read it:
//!
//! ```text
//! key "routerd-update" {
//!         algorithm hmac-sha256;
//!         secret "base64…";
//! };
//! ```

use std::fmt;

use data_encoding::BASE64;
use hickory_proto::rr::rdata::tsig::TsigAlgorithm as HickoryAlgorithm;
use hickory_proto::rr::{Name, TSigner};

use crate::artifacts::TsigAlgorithm;

/// The fudge of every signature we make: how far apart our clock and the server's may be, in
/// seconds (RFC 8945 §10 recommends 300).
pub const FUDGE_SECS: u16 = 300;

/// A TSIG key: its name, algorithm and secret. `Debug` leaves the secret out.
#[derive(Clone, PartialEq, Eq)]
pub struct TsigKey {
    /// The key name, as both sides configure it (`routerd-update`).
    pub name: Name,
    /// The HMAC algorithm.
    pub algorithm: TsigAlgorithm,
    secret: Vec<u8>,
}

/// Why a key clause or a base64 secret was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyFileError {
    /// The text is not a `key "name" { … };` clause.
    #[error("line {line}: {message}")]
    Syntax {
        /// 1-based line of the offending token (the last line at the end of the text).
        line: usize,
        /// What was expected and found.
        message: String,
    },
    /// The clause lacks `algorithm` or `secret`.
    #[error("key {key:?} has no {statement} statement")]
    Missing {
        /// The key name.
        key: String,
        /// `algorithm` or `secret`.
        statement: &'static str,
    },
    /// An algorithm hickory cannot sign with (HMAC-MD5, HMAC-SHA1, HMAC-SHA224).
    #[error("TSIG algorithm {0:?} is not supported (use hmac-sha256, hmac-sha384 or hmac-sha512)")]
    UnsupportedAlgorithm(String),
    /// The key name is not a domain name.
    #[error("key name {name:?} is not a domain name: {message}")]
    BadName {
        /// The name as written.
        name: String,
        /// Why it does not parse.
        message: String,
    },
    /// The secret is empty or not base64 (RFC 4648 §4).
    #[error("the secret is not base64: {0}")]
    BadSecret(String),
}

impl TsigKey {
    /// The key `name` of `algorithm` with the raw `secret` bytes.
    pub fn new(name: Name, algorithm: TsigAlgorithm, secret: Vec<u8>) -> Self {
        Self { name, algorithm, secret }
    }

    /// The key `name` of `algorithm` with a secret in base64 (RFC 4648 §4, padded, as
    /// `tsig-keygen` writes it; whitespace ignored).
    ///
    /// Errors: [`KeyFileError::BadSecret`] when the secret is empty or not base64.
    pub fn from_base64(
        name: Name,
        algorithm: TsigAlgorithm,
        secret: &str,
    ) -> Result<Self, KeyFileError> {
        Ok(Self::new(name, algorithm, base64_decode(secret).map_err(KeyFileError::BadSecret)?))
    }

    /// The key of a BIND `key` clause: `key "name" { algorithm hmac-sha256; secret "…"; };`.
    /// Comments (`#`, `//`, `/* */`) are allowed; the algorithm is case-insensitive; the name
    /// and the secret may be quoted or not. Exactly one clause.
    ///
    /// Errors: [`KeyFileError`] naming the line of a syntax error, a missing statement, an
    /// unsupported algorithm, a bad name or secret.
    pub fn parse_key_file(text: &str) -> Result<Self, KeyFileError> {
        Parser { tokens: tokenize(text)?, next: 0, last_line: text.lines().count().max(1) }
            .key_clause()
    }

    /// The key as a BIND `key` clause in `tsig-keygen`'s layout; [`TsigKey::parse_key_file`]
    /// reads it back to an equal key.
    pub fn to_key_file(&self) -> String {
        format!(
            "key \"{}\" {{\n\talgorithm {};\n\tsecret \"{}\";\n}};\n",
            key_label(&self.name),
            self.algorithm,
            BASE64.encode(&self.secret)
        )
    }

    /// A hickory signer of this key with a fudge of [`FUDGE_SECS`].
    pub fn signer(&self) -> TSigner {
        let algorithm = match self.algorithm {
            TsigAlgorithm::HmacSha256 => HickoryAlgorithm::HmacSha256,
            TsigAlgorithm::HmacSha384 => HickoryAlgorithm::HmacSha384,
            TsigAlgorithm::HmacSha512 => HickoryAlgorithm::HmacSha512,
        };
        TSigner::new(self.secret.clone(), algorithm, self.name.clone(), FUDGE_SECS)
            .expect("invariant: hickory signs with every SHA-2 HMAC TsigAlgorithm names")
    }

    /// The key name as BIND writes it in messages and key files: without the trailing dot.
    pub fn label(&self) -> String {
        key_label(&self.name)
    }

    /// The secret in base64 (RFC 4648 §4), as a key file holds it.
    pub fn secret_base64(&self) -> String {
        BASE64.encode(&self.secret)
    }
}

impl fmt::Debug for TsigKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TsigKey")
            .field("name", &self.name)
            .field("algorithm", &self.algorithm)
            .field("secret", &format_args!("<{} bytes>", self.secret.len()))
            .finish()
    }
}

fn key_label(name: &Name) -> String {
    name.to_string().trim_end_matches('.').to_owned()
}

/// A token of BIND's configuration grammar and the line it starts on.
#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Punct(char),
}

fn tokenize(text: &str) -> Result<Vec<(Token, usize)>, KeyFileError> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            '#' => skip_line(&mut chars, &mut line),
            '/' if chars.peek() == Some(&'/') => skip_line(&mut chars, &mut line),
            '/' if chars.peek() == Some(&'*') => {
                let start = line;
                chars.next();
                let mut prev = ' ';
                loop {
                    match chars.next() {
                        Some('/') if prev == '*' => break,
                        Some(c) => {
                            line += usize::from(c == '\n');
                            prev = c;
                        }
                        None => return Err(syntax(start, "unterminated /* comment")),
                    }
                }
            }
            '"' => {
                let start = line;
                let mut text = String::new();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => text.extend(chars.next()),
                        Some(c) => {
                            line += usize::from(c == '\n');
                            text.push(c);
                        }
                        None => return Err(syntax(start, "unterminated quoted string")),
                    }
                }
                tokens.push((Token::Quoted(text), start));
            }
            '{' | '}' | ';' => tokens.push((Token::Punct(c), line)),
            c => {
                let mut word = String::from(c);
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || "{};\"#".contains(c) {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                tokens.push((Token::Word(word), line));
            }
        }
    }
    Ok(tokens)
}

fn skip_line(chars: &mut impl Iterator<Item = char>, line: &mut usize) {
    if chars.any(|c| c == '\n') {
        *line += 1;
    }
}

fn syntax(line: usize, message: impl Into<String>) -> KeyFileError {
    KeyFileError::Syntax { line, message: message.into() }
}

struct Parser {
    tokens: Vec<(Token, usize)>,
    next: usize,
    last_line: usize,
}

impl Parser {
    fn key_clause(mut self) -> Result<TsigKey, KeyFileError> {
        self.keyword("key")?;
        let name_text = self.string("a key name")?;
        let name = Name::from_ascii(&name_text).map_err(|e| KeyFileError::BadName {
            name: name_text.clone(),
            message: e.to_string(),
        })?;
        self.punct('{')?;
        let (mut algorithm, mut secret) = (None, None);
        while !self.at_punct('}') {
            let (statement, line) = self.word("`algorithm`, `secret` or `}`")?;
            match statement.as_str() {
                "algorithm" => {
                    let text = self.string("an algorithm name")?;
                    let parsed = TsigAlgorithm::parse(&text)
                        .ok_or(KeyFileError::UnsupportedAlgorithm(text))?;
                    algorithm = Some(parsed);
                }
                "secret" => secret = Some(self.string("a base64 secret")?),
                other => return Err(syntax(line, format!("unknown statement `{other}` in key"))),
            }
            self.punct(';')?;
        }
        self.punct('}')?;
        self.punct(';')?;
        if let Some((token, line)) = self.tokens.get(self.next) {
            return Err(syntax(*line, format!("expected the end after `}};`, found {token}")));
        }
        let missing = |statement| KeyFileError::Missing { key: name_text.clone(), statement };
        let algorithm = algorithm.ok_or_else(|| missing("algorithm"))?;
        let secret = secret.ok_or_else(|| missing("secret"))?;
        TsigKey::from_base64(name, algorithm, &secret)
    }

    fn take(&mut self, expected: &str) -> Result<(&Token, usize), KeyFileError> {
        let last_line = self.last_line;
        let (token, line) = self
            .tokens
            .get(self.next)
            .ok_or_else(|| syntax(last_line, format!("expected {expected}, found the end")))?;
        self.next += 1;
        Ok((token, *line))
    }

    fn word(&mut self, expected: &str) -> Result<(String, usize), KeyFileError> {
        match self.take(expected)? {
            (Token::Word(w), line) => Ok((w.clone(), line)),
            (other, line) => Err(syntax(line, format!("expected {expected}, found {other}"))),
        }
    }

    fn keyword(&mut self, keyword: &str) -> Result<(), KeyFileError> {
        let expected = format!("`{keyword}`");
        match self.word(&expected)? {
            (w, _) if w == keyword => Ok(()),
            (w, line) => Err(syntax(line, format!("expected {expected}, found `{w}`"))),
        }
    }

    /// A quoted string or a bare word.
    fn string(&mut self, expected: &str) -> Result<String, KeyFileError> {
        match self.take(expected)? {
            (Token::Word(s) | Token::Quoted(s), _) => Ok(s.clone()),
            (other, line) => Err(syntax(line, format!("expected {expected}, found {other}"))),
        }
    }

    fn punct(&mut self, c: char) -> Result<(), KeyFileError> {
        let expected = format!("`{c}`");
        match self.take(&expected)? {
            (Token::Punct(p), _) if *p == c => Ok(()),
            (other, line) => Err(syntax(line, format!("expected {expected}, found {other}"))),
        }
    }

    fn at_punct(&self, c: char) -> bool {
        matches!(self.tokens.get(self.next), Some((Token::Punct(p), _)) if *p == c)
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Word(w) => write!(f, "`{w}`"),
            Self::Quoted(q) => write!(f, "{q:?}"),
            Self::Punct(c) => write!(f, "`{c}`"),
        }
    }
}

/// RFC 4648 §4 base64 with padding, whitespace ignored (a secret may be split over lines).
fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let digits: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if digits.is_empty() {
        return Err("it is empty".into());
    }
    BASE64.decode(digits.as_bytes()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENERATED: &str = "key \"routerd-update\" {\n\talgorithm hmac-sha256;\n\tsecret \
                             \"q5EjVbEHT6PUJ5xbWkFlDk9aTvfOqeNOOpVKYM8KTro=\";\n};\n";

    #[test]
    fn a_tsig_keygen_key_parses_and_prints_back_identically() {
        let key = TsigKey::parse_key_file(GENERATED).expect("parses");
        assert_eq!(key.label(), "routerd-update");
        assert_eq!(key.algorithm, TsigAlgorithm::HmacSha256);
        assert_eq!(key.secret.len(), 32);
        assert_eq!(key.to_key_file(), GENERATED);
        assert!(!format!("{key:?}").contains("q5Ej"), "Debug hides the secret: {key:?}");
    }

    #[test]
    fn comments_case_and_bare_words_are_accepted() {
        let text = "# made by hand\nkey routerd-update { // the update key\n  algorithm \
                    HMAC-SHA512; /* a\nblock */ secret \"AAEC\nAw==\"; };\n";
        let key = TsigKey::parse_key_file(text).expect("parses");
        assert_eq!(key.algorithm, TsigAlgorithm::HmacSha512);
        assert_eq!(key.secret, [0, 1, 2, 3]);
        assert_eq!(TsigKey::parse_key_file(&key.to_key_file()), Ok(key));
    }

    #[test]
    fn bad_key_files_are_rejected_with_the_line_and_what_is_wrong() {
        let err = |text: &str| TsigKey::parse_key_file(text).expect_err(text).to_string();
        assert_eq!(
            err("key \"k\" {\n\talgorithm hmac-md5;\n\tsecret \"AAAA\";\n};"),
            "TSIG algorithm \"hmac-md5\" is not supported (use hmac-sha256, hmac-sha384 or \
             hmac-sha512)"
        );
        assert_eq!(
            err("key \"k\" {\n\tsecret \"AAAA\";\n};"),
            "key \"k\" has no algorithm statement"
        );
        assert_eq!(
            err("key \"k\" {\n\talgorithm hmac-sha256;\n\tsecret \"AAAA\"\n};"),
            "line 4: expected `;`, found `}`"
        );
        assert_eq!(
            err("key \"k\" {\n\tsecrets \"AAAA\";\n};"),
            "line 2: unknown statement `secrets` in key"
        );
        assert_eq!(
            err("key \"k\" {"),
            "line 1: expected `algorithm`, `secret` or `}`, found the end"
        );
        assert_eq!(err("zone \"k\" {};"), "line 1: expected `key`, found `zone`");
        assert_eq!(
            err("key \"k\" { algorithm hmac-sha256; secret \"A*==\"; };"),
            "the secret is not base64: invalid symbol at 1"
        );
        assert_eq!(
            err("key \"k\" { algorithm hmac-sha256; secret \"AAA\"; };"),
            "the secret is not base64: invalid length at 0"
        );
        assert_eq!(
            err("key \"k\" { algorithm hmac-sha256; secret \"AAAA\"; };\nkey \"j\" {};"),
            "line 2: expected the end after `};`, found `key`"
        );
        assert!(
            err("key \"a..b\" { algorithm hmac-sha256; secret \"AAAA\"; };")
                .starts_with("key name \"a..b\"")
        );
    }
}
