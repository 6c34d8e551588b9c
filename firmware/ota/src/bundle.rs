//! What inspecting a bundle tells: [`BundleInfo`], and the [`BundleDigest`] an install must
//! match so that what gets installed is what the operator looked at.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use sha2::{Digest, Sha256};
use zbus::zvariant::OwnedValue;

use crate::dict::take;
use crate::error::{Call, OtaError};

/// A bundle's manifest as RAUC reports it, before installing.
///
/// Source: `InspectBundle`'s `info` dictionary (RAUC >= 1.9), or `Info`'s `(compatible,
/// version)` pair on RAUC 1.8, which reports nothing else. RAUC's D-Bus API reports no signer
/// in either version: the signature is checked against the system's keyring, and a bundle
/// signed by another CA is refused (by `Info`, `InspectBundle` and `InstallBundle`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleInfo {
    /// The manifest's `[update] compatible`; RAUC installs only when it equals the system's.
    pub compatible: String,
    /// The manifest's `[update] version`; `None` when the manifest has none.
    pub version: Option<String>,
    /// The manifest's `[update] description` (RAUC >= 1.9; `None` on 1.8).
    pub description: Option<String>,
    /// The manifest's `[update] build` (RAUC >= 1.9; `None` on 1.8).
    pub build: Option<String>,
    /// The manifest's `[bundle] format`: `plain`, `verity` or `crypt` (RAUC >= 1.9).
    pub format: Option<String>,
    /// What [`crate::Rauc::install`] must be given to install exactly this bundle.
    pub digest: BundleDigest,
    /// The certificate that signed it, read from the bundle after RAUC verified it
    /// ([`crate::signer`]); `None` when its signature could not be parsed here.
    pub signer: Option<crate::signer::Signer>,
}

/// Identifies one bundle for "install what was inspected".
///
/// `Display` and `FromStr` use `manifest-sha256:<hex>` and `file-sha256:<hex>` (64 lowercase
/// hex digits), one token an operator or a form can carry from inspect to install.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BundleDigest {
    /// RAUC's manifest hash: SHA-256 over the signed manifest, from `InspectBundle`
    /// (`info.manifest-hash`, RAUC >= 1.9). RAUC >= 1.14 enforces it itself
    /// (`InstallBundle`'s `require-manifest-hash`).
    Manifest(String),
    /// SHA-256 of the whole bundle file, computed by this client because RAUC 1.8 reports no
    /// manifest hash. It is checked by this client just before `InstallBundle`.
    File(String),
}

/// A digest string that is not `manifest-sha256:<hex>` or `file-sha256:<hex>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bundle digest {0:?}: expected manifest-sha256:<64 hex> or file-sha256:<64 hex>")]
pub struct DigestParseError(String);

impl BundleDigest {
    /// The hex digits, without the kind.
    pub fn hex(&self) -> &str {
        match self {
            Self::Manifest(hex) | Self::File(hex) => hex,
        }
    }
}

impl fmt::Display for BundleDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Manifest(hex) => write!(f, "manifest-sha256:{hex}"),
            Self::File(hex) => write!(f, "file-sha256:{hex}"),
        }
    }
}

impl FromStr for BundleDigest {
    type Err = DigestParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (kind, hex) = s.split_once(':').ok_or_else(|| DigestParseError(s.into()))?;
        let is_sha256 =
            hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        match kind {
            _ if !is_sha256 => Err(DigestParseError(s.into())),
            "manifest-sha256" => Ok(Self::Manifest(hex.into())),
            "file-sha256" => Ok(Self::File(hex.into())),
            _ => Err(DigestParseError(s.into())),
        }
    }
}

/// Reads `InspectBundle`'s reply: `manifest-hash` (s) and the `update` dictionary
/// (`compatible`, `version`, `description`, `build`; all s), `bundle.format` (s).
/// Keys RAUC may add later are ignored; a missing `compatible` or `manifest-hash` is an error
/// because RAUC's reference documents both as always present.
pub(crate) fn parse_inspect_reply(
    mut info: HashMap<String, OwnedValue>,
) -> Result<BundleInfo, OtaError> {
    const CALL: Call = Call::InspectBundle;
    let hash = take::<String>(CALL, &mut info, "manifest-hash")?
        .ok_or_else(|| OtaError::unexpected(CALL, "no manifest-hash"))?;
    let mut update: HashMap<String, OwnedValue> =
        take(CALL, &mut info, "update")?.unwrap_or_default();
    let mut bundle: HashMap<String, OwnedValue> =
        take(CALL, &mut info, "bundle")?.unwrap_or_default();
    let compatible = take::<String>(CALL, &mut update, "compatible")?
        .ok_or_else(|| OtaError::unexpected(CALL, "no update.compatible"))?;
    Ok(BundleInfo {
        compatible,
        version: take(CALL, &mut update, "version")?,
        description: take(CALL, &mut update, "description")?,
        build: take(CALL, &mut update, "build")?,
        format: take(CALL, &mut bundle, "format")?,
        digest: BundleDigest::Manifest(hash),
        signer: None,
    })
}

/// Builds the 1.8 answer from `Info`'s `(compatible, version)` (RAUC answers `""` for a
/// manifest without a version) and the file digest computed here.
pub(crate) fn from_info(compatible: String, version: String, file_hex: String) -> BundleInfo {
    BundleInfo {
        compatible,
        version: Some(version).filter(|v| !v.is_empty()),
        description: None,
        build: None,
        format: None,
        digest: BundleDigest::File(file_hex),
        signer: None,
    }
}

/// SHA-256 of the file at `path` as lowercase hex, read on a blocking thread (bundles are
/// tens to hundreds of MiB).
pub(crate) async fn file_sha256(path: &Path) -> Result<String, OtaError> {
    let owned = path.to_path_buf();
    let hashed = tokio::task::spawn_blocking(move || hash_file(&owned));
    match hashed.await {
        Ok(result) => result.map_err(|source| OtaError::Read { path: path.into(), source }),
        // The closure does not panic on I/O; a join error means the runtime is shutting down.
        Err(join) => Err(OtaError::Read { path: path.into(), source: std::io::Error::other(join) }),
    }
}

fn hash_file(path: &PathBuf) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use zbus::zvariant::{Str, Value};

    use super::*;

    fn owned(value: Value<'_>) -> OwnedValue {
        value.try_to_owned().expect("no file descriptors in test values")
    }

    fn dict(pairs: &[(&str, Value<'_>)]) -> HashMap<String, OwnedValue> {
        pairs.iter().map(|(k, v)| (k.to_string(), owned(v.try_clone().expect("clone")))).collect()
    }

    /// The reply shape of RAUC's reference ("InspectBundle() Method", info dictionary).
    #[test]
    fn inspect_reply_gives_manifest_fields_and_manifest_hash() {
        let hash = "ab".repeat(32);
        let update = dict(&[
            ("compatible", Value::from("routerd-x86_64")),
            ("version", Value::from("0.2.0")),
            ("description", Value::from("routerd")),
        ]);
        let bundle = dict(&[("format", Value::from("verity")), ("verity-size", Value::U64(4096))]);
        let reply = dict(&[
            ("manifest-hash", Value::from(hash.as_str())),
            ("update", Value::from(update)),
            ("bundle", Value::from(bundle)),
            ("images", Value::from(Vec::<HashMap<String, OwnedValue>>::new())),
        ]);
        let info = parse_inspect_reply(reply).expect("parses");
        assert_eq!(info.compatible, "routerd-x86_64");
        assert_eq!(info.version.as_deref(), Some("0.2.0"));
        assert_eq!(info.description.as_deref(), Some("routerd"));
        assert_eq!(info.build, None);
        assert_eq!(info.format.as_deref(), Some("verity"));
        assert_eq!(info.digest, BundleDigest::Manifest(hash));
    }

    #[test]
    fn inspect_reply_with_a_mistyped_key_is_an_unexpected_reply_naming_it() {
        let update = dict(&[("compatible", Value::U32(7))]);
        let reply = dict(&[("manifest-hash", Value::from("00")), ("update", Value::from(update))]);
        let err = parse_inspect_reply(reply).expect_err("compatible is not a string");
        assert!(
            matches!(&err, OtaError::UnexpectedReply { detail, .. } if detail.starts_with("compatible: u:")),
            "{err}"
        );
    }

    #[test]
    fn inspect_reply_without_manifest_hash_is_refused_as_unexpected() {
        let update = dict(&[("compatible", Value::Str(Str::from("x")))]);
        let err = parse_inspect_reply(dict(&[("update", Value::from(update))]));
        assert!(matches!(err, Err(OtaError::UnexpectedReply { .. })), "{err:?}");
    }

    #[test]
    fn digest_round_trips_through_its_text_form_and_rejects_anything_else() {
        let hex = "0123456789abcdef".repeat(4);
        for digest in [BundleDigest::Manifest(hex.clone()), BundleDigest::File(hex.clone())] {
            assert_eq!(digest.to_string().parse::<BundleDigest>(), Ok(digest.clone()));
        }
        for bad in [
            hex.clone(),
            format!("sha256:{hex}"),
            format!("file-sha256:{}", &hex[1..]),
            format!("file-sha256:{}", hex.to_uppercase()),
            format!("manifest-sha256:{}g", &hex[1..]),
        ] {
            assert!(bad.parse::<BundleDigest>().is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn info_without_version_reports_none() {
        let info = from_info("c".into(), String::new(), "00".into());
        assert_eq!(info.version, None);
        assert_eq!(info.digest, BundleDigest::File("00".into()));
    }
}
