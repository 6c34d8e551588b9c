//! The administrator's credentials, in the state directory (`--state-dir`, default
//! `/var/lib/routerd`; the data partition on the image, so they survive updates).
//!
//! - `admin.phc`: the admin password as an argon2id PHC string (`$argon2id$v=19$…`), mode 0600.
//!   There is no default password: until one is set, nobody can log in to the web UI.
//! - `setup-token.phc`: while no password is set, the argon2id hash of a one-time setup token.
//!   The token itself is printed once on the console and in the journal when the daemon starts;
//!   the web UI's setup page accepts it once to set the password. `routerctl passwd` on the
//!   console sets the password directly (the control socket is root only).
//!
//! Writes go to a sibling file and are renamed into place, so a power cut leaves the old or the
//! new file, never half of one.

use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};

/// Shortest accepted password, in characters (NIST SP 800-63B §5.1.1.2).
pub const MIN_PASSWORD_CHARS: usize = 8;

/// Lowest zxcvbn score accepted (0 to 4): 2 is "somewhat guessable", out of reach of an online
/// attack that the login's rate limits already slow down; 0 and 1 are common passwords, their
/// close variants, repeats and sequences.
const MIN_SCORE: zxcvbn::Score = zxcvbn::Score::Two;

/// Words an attacker tries first on this device, beside zxcvbn's own lists.
const DEVICE_WORDS: [&str; 5] = ["routerd", "router", "admin", "root", "firmware"];

/// Why a password or token was not accepted or stored.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Too short (see [`MIN_PASSWORD_CHARS`]).
    #[error("the password must have at least {MIN_PASSWORD_CHARS} characters")]
    TooShort,
    /// Blank, one character repeated, or common enough to be guessed ([`check_password`]).
    #[error("{0}")]
    Weak(String),
    /// The state directory or a file in it could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// Hashing failed (no randomness for the salt).
    #[error("hashing: {0}")]
    Hash(String),
}

/// The credentials in one state directory.
pub struct AuthStore {
    dir: PathBuf,
}

impl AuthStore {
    /// The store in `dir` (created 0700 on the first write).
    pub fn new(dir: &Path) -> Self {
        Self { dir: dir.to_path_buf() }
    }

    fn password_file(&self) -> PathBuf {
        self.dir.join("admin.phc")
    }

    fn token_file(&self) -> PathBuf {
        self.dir.join("setup-token.phc")
    }

    /// Whether an admin password is set.
    pub fn password_set(&self) -> bool {
        self.password_file().exists()
    }

    /// Hashes `password` (argon2id, random salt) and stores it; the setup token, if any, is
    /// spent.
    ///
    /// Errors: [`AuthError::TooShort`], [`AuthError::Weak`], [`AuthError::Io`],
    /// [`AuthError::Hash`].
    pub fn set_password(&self, password: &str) -> Result<(), AuthError> {
        check_password(password)?;
        self.write(&self.password_file(), &hash(password)?)?;
        match std::fs::remove_file(self.token_file()) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(AuthError::Io { path: self.token_file(), source }),
        }
    }

    /// A value that changes whenever the password is set: the password file's inode and
    /// modification time (every write renames a new file into place). Empty when none is set.
    pub fn stamp(&self) -> String {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(self.password_file())
            .map(|m| format!("{}:{}.{}", m.ino(), m.mtime(), m.mtime_nsec()))
            .unwrap_or_default()
    }

    /// Whether `password` is the admin password (false when none is set or the file is
    /// damaged).
    pub fn verify_password(&self, password: &str) -> bool {
        verify(&self.password_file(), password)
    }

    /// When no password is set: a fresh one-time setup token (its hash replaces any earlier
    /// token's), to be shown to the operator once. `None` when a password is set.
    ///
    /// Errors: [`AuthError::Io`], [`AuthError::Hash`].
    pub fn issue_setup_token(&self) -> Result<Option<String>, AuthError> {
        if self.password_set() {
            return Ok(None);
        }
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| AuthError::Hash(e.to_string()))?;
        let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        self.write(&self.token_file(), &hash(&token)?)?;
        Ok(Some(token))
    }

    /// Whether `token` is the current setup token (never once a password is set).
    pub fn verify_setup_token(&self, token: &str) -> bool {
        !self.password_set() && verify(&self.token_file(), token)
    }

    /// Writes `text` to `path` with mode 0600 through a sibling file and a rename.
    fn write(&self, path: &Path, text: &str) -> Result<(), AuthError> {
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| AuthError::Io { path, source }
        };
        if !self.dir.exists() {
            std::fs::create_dir_all(&self.dir).map_err(io_err(&self.dir))?;
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
                .map_err(io_err(&self.dir))?;
        }
        let tmp = path.with_extension("tmp");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io_err(&tmp))?;
        io::Write::write_all(&mut file, text.as_bytes()).map_err(io_err(&tmp))?;
        file.sync_all().map_err(io_err(&tmp))?;
        std::fs::rename(&tmp, path).map_err(io_err(path))
    }
}

/// Checks a new password as NIST SP 800-63B §5.1.1.2 asks: at least [`MIN_PASSWORD_CHARS`]
/// characters, any characters (no composition rules), not blank or one character repeated, and
/// not found in or near lists of common and breached passwords (zxcvbn's estimate, with this
/// device's own words added).
///
/// Errors: [`AuthError::TooShort`]; [`AuthError::Weak`] saying why, with zxcvbn's advice.
pub fn check_password(password: &str) -> Result<(), AuthError> {
    if password.trim().is_empty() {
        return Err(AuthError::Weak("the password must not be blank".into()));
    }
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(AuthError::TooShort);
    }
    let mut chars = password.chars();
    if let Some(first) = chars.next()
        && chars.all(|c| c == first)
    {
        return Err(AuthError::Weak("the password must not be one character repeated".into()));
    }
    let estimate = zxcvbn::zxcvbn(password, &DEVICE_WORDS);
    if estimate.score() >= MIN_SCORE {
        return Ok(());
    }
    let mut why = String::from("the password is too easy to guess");
    if let Some(feedback) = estimate.feedback() {
        if let Some(warning) = feedback.warning() {
            why.push_str(&format!(": {warning}"));
        }
        for suggestion in feedback.suggestions() {
            why.push_str(&format!(" {suggestion}"));
        }
    }
    Err(AuthError::Weak(why))
}

fn hash(secret: &str) -> Result<String, AuthError> {
    Argon2::default()
        .hash_password(secret.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| AuthError::Hash(e.to_string()))
}

fn verify(file: &Path, secret: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else { return false };
    let Ok(parsed) = PasswordHash::new(text.trim()) else { return false };
    Argon2::default().verify_password(secret.as_bytes(), &parsed).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setup_token_works_until_a_password_is_set_and_the_files_are_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = AuthStore::new(&dir.path().join("state"));
        assert!(!store.password_set());
        assert!(!store.verify_password(""), "no default password");
        let token = store.issue_setup_token().expect("issue").expect("a token");
        assert_eq!(token.len(), 32);
        assert!(store.verify_setup_token(&token));
        assert!(!store.verify_setup_token("0".repeat(32).as_str()));

        assert!(matches!(store.set_password("short"), Err(AuthError::TooShort)));
        store.set_password("correct horse").expect("set");
        assert!(store.verify_password("correct horse"));
        assert!(!store.verify_password("correct horsE"));
        assert!(!store.verify_setup_token(&token), "the token is spent");
        assert_eq!(store.issue_setup_token().expect("issue"), None);

        let phc = std::fs::read_to_string(dir.path().join("state/admin.phc")).expect("file");
        assert!(phc.starts_with("$argon2id$"), "{phc}");
        let mode = |p: &str| {
            std::fs::metadata(dir.path().join(p)).expect("stat").permissions().mode() & 0o777
        };
        assert_eq!(mode("state/admin.phc"), 0o600);
        assert_eq!(mode("state"), 0o700);
    }

    #[test]
    fn passwords_follow_nist_800_63b() {
        let weak = |p: &str| match check_password(p) {
            Err(AuthError::Weak(why)) => why,
            other => panic!("{p:?}: {other:?}"),
        };
        assert!(weak("        ").contains("blank"));
        assert!(weak("\t\t \t\t \t\t").contains("blank"));
        assert!(weak("aaaaaaaaaa").contains("one character repeated"));
        for common in ["password1", "12345678", "qwertyuiop", "iloveyou2", "routerd1", "admin123"] {
            assert!(weak(common).starts_with("the password is too easy to guess"), "{common}");
        }
        assert!(weak("12345678").contains("common password"), "zxcvbn's advice");
        assert!(matches!(check_password("abc"), Err(AuthError::TooShort)));
        // No composition rules: long phrases and random strings pass, whatever they contain.
        for good in ["correct horse", "zq8#Lp2v", "tomatoes under the bridge", "ÄÖÜ-straße-77"]
        {
            assert!(check_password(good).is_ok(), "{good}");
        }
    }
}
