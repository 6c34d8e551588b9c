//! Secrets that must reach a host file but never a ledger, a plan, a Result document or a log
//! line (the PPP passwords of `PPPoEInterface`).
//!
//! A [`Secret`] carries its value in memory only. Everything that prints or stores it sees a
//! digest instead: HMAC-SHA-256 (RFC 2104) of the value under a key drawn at random once per
//! process, so two secrets compare equal exactly when their values do, a change shows as a
//! changed digest, and nothing written anywhere lets a reader test guesses of the password
//! offline (the key never leaves the process). Digests therefore differ between processes; a
//! secret read back from a ledger or a Result document has a digest and no value, and is only
//! ever shown.

use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use ring::hmac;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The prefix of every digest.
const SCHEME: &str = "hmac-sha256:";

/// A secret value, shown only as its digest.
///
/// Serialized as the digest string (`"hmac-sha256:3f0a…"`, 16 hex digits); deserialized into
/// a secret without a value. `Debug` and `Display` print the digest. Equality is the digests'.
#[derive(Clone)]
pub struct Secret {
    digest: String,
    value: Option<String>,
}

impl Secret {
    /// Wraps `value`, computing its digest under this process's key.
    pub fn new(value: impl Into<String>) -> Self {
        let value = value.into();
        Self { digest: digest(&value), value: Some(value) }
    }

    /// The value, for the one writer that puts it where it belongs; `None` for a secret read
    /// back from a document.
    pub fn expose(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// The digest, as shown and stored.
    pub fn digest(&self) -> &str {
        &self.digest
    }
}

/// The process's HMAC key; `None` when the system's random source failed.
fn key() -> Option<&'static hmac::Key> {
    static KEY: OnceLock<Option<hmac::Key>> = OnceLock::new();
    KEY.get_or_init(|| {
        hmac::Key::generate(hmac::HMAC_SHA256, &ring::rand::SystemRandom::new()).ok()
    })
    .as_ref()
}

fn digest(value: &str) -> String {
    let Some(key) = key() else {
        // Without a key no digest is safe to show. A digest unique to each call makes every
        // comparison "changed": the secret is rewritten on every reconcile rather than a
        // change being missed.
        static N: AtomicU64 = AtomicU64::new(0);
        return format!("{SCHEME}unavailable-{}", N.fetch_add(1, Ordering::Relaxed));
    };
    let tag = hmac::sign(key, value.as_bytes());
    let hex: String = tag.as_ref()[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{SCHEME}{hex}")
}

impl PartialEq for Secret {
    fn eq(&self, other: &Self) -> bool {
        self.digest == other.digest
    }
}

impl Eq for Secret {}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({})", self.digest)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.digest)
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.digest)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self { digest: String::deserialize(deserializer)?, value: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_shows_only_its_digest_and_compares_by_value() {
        let password = "correct horse battery staple";
        let a = Secret::new(password);
        let json = serde_json::to_string(&a).expect("serializes");
        let shown = format!("{a:?} {a} {json}");
        assert!(!shown.contains(password), "{shown}");
        assert!(a.digest().starts_with(SCHEME) && a.digest().len() == SCHEME.len() + 16);
        assert_eq!(a, Secret::new(password));
        assert_ne!(a, Secret::new("correct horse battery stapler"));
        assert_eq!(a.expose(), Some(password));
        // Read back from a document: the digest, no value.
        let back: Secret = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, a);
        assert_eq!(back.expose(), None);
    }
}
