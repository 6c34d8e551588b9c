//! Who signed a bundle. RAUC checks a bundle's signature against the keyring but reports no
//! signer over D-Bus (`InspectBundle` answers the manifest only), so the signing certificate
//! is read here from the bundle itself, after RAUC accepted it.
//!
//! A RAUC bundle ends with its signature, a DER CMS `SignedData` (RFC 5652 §5), followed by
//! the signature's size as a big-endian 64-bit integer (RAUC reference, "Bundle format"). The
//! signer is the certificate that the `SignerInfo`'s issuer and serial number name (OpenSSL's
//! `CMS_sign` identifies signers that way; RAUC signs through it).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use cms::cert::CertificateChoices;
use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerIdentifier};
use x509_cert::der::oid::ObjectIdentifier;
use x509_cert::der::{Decode, Encode};

/// `id-signedData` (RFC 5652 §5.1).
const ID_SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");

/// RAUC's largest accepted signature (`max-bundle-signature-size` may raise its 64 KiB
/// default; a signature with a long chain stays far below this).
const MAX_SIGNATURE: u64 = 1 << 20;

/// The certificate that signed a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signer {
    /// Its subject as an RFC 4514 string (`CN=routerd release signing,O=Example`).
    pub subject: String,
    /// Its issuer, the same way.
    pub issuer: String,
    /// The end of its validity, RFC 3339 (`2036-11-21T07:00:00Z`).
    pub not_after: String,
}

/// Why the signer could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SignerError {
    /// Reading the file failed.
    #[error("reading the bundle's signature: {0}")]
    Io(#[from] std::io::Error),
    /// The tail of the file is not a RAUC signature.
    #[error("the bundle's signature is malformed: {0}")]
    Malformed(String),
}

/// Reads the signing certificate of the bundle at `path`. It does not verify anything: call it
/// only for a bundle RAUC has inspected (which verified the signature against the keyring).
///
/// Errors: [`SignerError`].
pub fn read(path: &Path) -> Result<Signer, SignerError> {
    let malformed = |what: String| SignerError::Malformed(what);
    let mut file = File::open(path)?;
    let length = file.metadata()?.len();
    if length < 8 {
        return Err(malformed("shorter than its size field".into()));
    }
    file.seek(SeekFrom::Start(length - 8))?;
    let mut size = [0u8; 8];
    file.read_exact(&mut size)?;
    let size = u64::from_be_bytes(size);
    if size == 0 || size > MAX_SIGNATURE || size > length - 8 {
        return Err(malformed(format!("a signature size of {size} bytes")));
    }
    file.seek(SeekFrom::Start(length - 8 - size))?;
    let mut der = vec![0u8; usize::try_from(size).map_err(|e| malformed(e.to_string()))?];
    file.read_exact(&mut der)?;
    signer_of(&der)
}

/// The signer of a DER CMS `ContentInfo` holding `SignedData`.
fn signer_of(der: &[u8]) -> Result<Signer, SignerError> {
    let malformed = |what: String| SignerError::Malformed(what);
    let info = ContentInfo::from_der(der).map_err(|e| malformed(format!("CMS: {e}")))?;
    if info.content_type != ID_SIGNED_DATA {
        return Err(malformed(format!("content type {} is not signed data", info.content_type)));
    }
    let signed = info
        .content
        .decode_as::<SignedData>()
        .map_err(|e| malformed(format!("signed data: {e}")))?;
    let signer_info =
        signed.signer_infos.0.iter().next().ok_or_else(|| malformed("no signer".into()))?;
    let SignerIdentifier::IssuerAndSerialNumber(id) = &signer_info.sid else {
        return Err(malformed("the signer is named by key identifier only".into()));
    };
    let certificate = signed
        .certificates
        .iter()
        .flat_map(|set| set.0.iter())
        .filter_map(|choice| match choice {
            CertificateChoices::Certificate(c) => Some(c),
            CertificateChoices::Other(_) => None,
        })
        .find(|c| {
            let tbs = &c.tbs_certificate;
            tbs.serial_number == id.serial_number
                && tbs.issuer.to_der().ok() == id.issuer.to_der().ok()
        })
        .ok_or_else(|| malformed("the signing certificate is not in the signature".into()))?;
    let tbs = &certificate.tbs_certificate;
    Ok(Signer {
        subject: tbs.subject.to_string(),
        issuer: tbs.issuer.to_string(),
        not_after: tbs.validity.not_after.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_a_signature_tail_is_malformed_not_a_panic() {
        let dir = tempfile::tempdir().expect("tempdir");
        let short = dir.path().join("short");
        std::fs::write(&short, b"abc").expect("write");
        assert!(matches!(read(&short), Err(SignerError::Malformed(_))));
        let huge = dir.path().join("huge");
        let mut bytes = vec![0u8; 64];
        bytes.extend_from_slice(&u64::MAX.to_be_bytes());
        std::fs::write(&huge, &bytes).expect("write");
        assert!(matches!(read(&huge), Err(SignerError::Malformed(_))));
        let garbage = dir.path().join("garbage");
        let mut bytes = vec![0x30u8; 64];
        bytes.extend_from_slice(&32u64.to_be_bytes());
        std::fs::write(&garbage, &bytes).expect("write");
        assert!(matches!(read(&garbage), Err(SignerError::Malformed(_))));
    }
}
