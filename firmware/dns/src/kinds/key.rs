//! `DNSTSIGKey`: a TSIG key (RFC 8945) shared by servers, zones and remote primaries. Its
//! secret comes from router.yaml (`secret`), from a file (`secretFile`) or is generated once
//! (`generate: true`); it reaches only the key file (mode 0600, `bind.config key/<name>`),
//! never a ledger, plan or log, which show a digest.

use routerd_engine::registry::KindRender;
use routerd_engine::render::{Out, RenderCtx};
use routerd_host::ArtifactSpec;
use routerd_host::kinds::external::ExternalArtifactSpec;
use routerd_host::secret::Secret;
use routerd_model::Resource;
use routerd_model::external::{ExternalCheck, ExternalKind, ExternalKindSpec};
use serde::Deserialize;

use crate::API_VERSION;
use crate::artifacts::{BIND_CONFIG, BindConfig, KeySecret, TsigAlgorithm};

/// `spec` of a `DNSTSIGKey`: exactly one of `secret`, `secretFile`, `generate`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TsigKeySpec {
    /// The HMAC; default `hmac-sha256`.
    #[serde(default)]
    pub algorithm: TsigAlgorithm,
    /// The secret, base64 (as `tsig-keygen` prints it).
    #[serde(default)]
    pub secret: Option<String>,
    /// A file on the router holding the secret, base64.
    #[serde(default)]
    pub secret_file: Option<String>,
    /// Make a random secret once and keep it.
    #[serde(default)]
    pub generate: bool,
}

impl ExternalKindSpec for TsigKeySpec {
    fn validate(&self, c: &mut ExternalCheck<'_, '_, '_>) {
        let sources = [self.secret.is_some(), self.secret_file.is_some(), self.generate]
            .iter()
            .filter(|s| **s)
            .count();
        if sources != 1 {
            c.error("", "give exactly one of secret, secretFile and generate: true");
        }
        if let Some(secret) = &self.secret
            && !is_base64(secret)
        {
            c.error("secret", "the secret is base64, as tsig-keygen prints it");
        }
        if let Some(path) = &self.secret_file
            && !path.starts_with('/')
        {
            c.error("secretFile", "secretFile is an absolute path on the router");
        }
        if !crate::kinds::is_bind_name(&c.resource().name) {
            c.error("", "a key's name is letters, digits, '-', '_' and '.' (it is its TSIG name)");
        }
    }
}

/// Whether `text` is non-empty standard base64 with padding (RFC 4648 §4), as BIND takes a
/// secret.
pub fn is_base64(text: &str) -> bool {
    crate::bind::key::is_base64(text.trim())
}

/// The resource kind `DNSTSIGKey`.
pub static DNS_TSIG_KEY: ExternalKind = ExternalKind::of::<TsigKeySpec>(API_VERSION, "DNSTSIGKey");

/// The artifact name of key `name`'s file.
pub fn key_artifact_name(name: &str) -> String {
    format!("key/{name}")
}

/// Renders a key into its key file.
pub(crate) struct KeyRender;

impl KindRender for KeyRender {
    fn render(&self, _ctx: &RenderCtx<'_>, res: &Resource, out: &mut Out) {
        let Some(spec) = res.external_spec::<TsigKeySpec>() else { return };
        let inline = spec.secret.as_deref().map(|s| Secret::new(s.trim()));
        let secret = match (&inline, &spec.secret_file) {
            (Some(secret), _) => KeySecret::Inline(secret.clone()),
            (None, Some(path)) => KeySecret::File(path.clone()),
            (None, None) => KeySecret::Generated,
        };
        let config = BindConfig::Key { algorithm: spec.algorithm, secret };
        let artifact =
            ExternalArtifactSpec::new(&BIND_CONFIG, key_artifact_name(&res.name), &config).map(
                |a| match inline {
                    // The value travels beside the attributes, in memory only.
                    Some(secret) => a.with_secret(secret),
                    None => a,
                },
            );
        match artifact {
            Ok(artifact) => {
                out.ensure(ArtifactSpec::External(artifact), Vec::new());
            }
            Err(e) => out.warn(format!("key file not rendered: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_checked() {
        assert!(is_base64("c2VjcmV0LXNlY3JldC1zZWNyZXQ="));
        assert!(!is_base64("not base64!"));
        assert!(!is_base64("abc"));
        assert!(!is_base64(""));
    }
}
