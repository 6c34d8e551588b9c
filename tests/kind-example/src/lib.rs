//! A controller crate in miniature (ADR 0010, `docs/adding-a-kind.md`): the resource kind
//! `Motd` (a login banner), the artifact kind `example.motd` (its file under
//! `/etc/routerd/motd.d/`), the backend that lists, writes and removes those files, and a doctor
//! check. [`register`] is the crate's one entry point; nothing in the engine, the model or host
//! names this crate. `tests/it.rs` parses, plans and applies it through a real session.

use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use routerd_engine::kind_status::{KindCondition, KindStatus, StatusFacts};
use routerd_engine::registry::{BackendContext, DoctorChecks, KindRender, Registry, RegistryError};
use routerd_engine::render::{Out, RenderCtx};
use routerd_engine::{ConditionStatus, OperationResult, ResultDocument};
use routerd_host::ControllerCode;
use routerd_host::kinds::Diffs;
use routerd_host::kinds::external::{
    ExternalArtifactKind, ExternalArtifactSpec, ExternalArtifactType,
};
use routerd_host::{
    ApplyWith, Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, Backend, HostError, Target,
};
use routerd_model::external::{ExternalCheck, ExternalKind, ExternalKindSpec};
use routerd_model::status::{CheckStatus, DoctorCheck};
use routerd_model::{Config, Resource, ResourceKind};
use serde::{Deserialize, Serialize};

/// The apiVersion of this crate's kinds.
pub const API_VERSION: &str = "example.routerd.net/v1alpha1";
/// Where the banners live, below the target's root.
pub const MOTD_DIR: &str = "/etc/routerd/motd.d";
/// The longest banner, in bytes.
pub const MAX_TEXT: usize = 4096;

/// `spec` of a `Motd`: the banner shown at login.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MotdSpec {
    /// The banner text; at most [`MAX_TEXT`] bytes.
    pub text: String,
    /// An `Interface` whose name the banner is about, if any.
    #[serde(default)]
    pub interface: Option<String>,
}

impl ExternalKindSpec for MotdSpec {
    fn validate(&self, c: &mut ExternalCheck<'_, '_, '_>) {
        if self.text.len() > MAX_TEXT {
            c.error("text", format!("text is {} bytes, at most {MAX_TEXT}", self.text.len()));
        }
        if let Some(name) = &self.interface {
            c.reference("interface", name, ResourceKind::Interface);
        }
    }
}

/// The resource kind `Motd`.
pub static MOTD: ExternalKind = ExternalKind::of::<MotdSpec>(API_VERSION, "Motd");

/// Attributes of an `example.motd` artifact: the file's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MotdFile {
    /// The file's whole content.
    pub text: String,
}

impl ExternalArtifactType for MotdFile {
    fn drift(&self, observed: &Self, diffs: &mut Diffs) {
        diffs.compare("text", &self.text, &observed.text);
    }
}

/// The artifact kind `example.motd`, named by the file's name, applied by the family
/// `example-motd`.
pub static MOTD_FILE: ExternalArtifactKind =
    ExternalArtifactKind::of::<MotdFile>("example.motd", "example-motd");

/// Renders a `Motd` into its file.
struct MotdRender;

/// `Shown`: whether the banner's file is in place, the one condition this kind adds.
const SHOWN: ControllerCode = ControllerCode::new("Shown");
/// `Shown` is `True`.
const BANNER_IN_PLACE: ControllerCode = ControllerCode::new("BannerInPlace");
/// `Shown` is `False`: the file is still to be written, or differs.
const BANNER_PENDING: ControllerCode = ControllerCode::new("BannerPending");

impl KindRender for MotdRender {
    fn render(&self, _ctx: &RenderCtx<'_>, res: &Resource, out: &mut Out) {
        let Some(spec) = res.external_spec::<MotdSpec>() else { return };
        let file = MotdFile { text: format!("{}\n", spec.text.trim_end()) };
        match ExternalArtifactSpec::new(&MOTD_FILE, &res.name, &file) {
            Ok(artifact) => {
                out.ensure(ArtifactSpec::External(artifact), Vec::new());
            }
            Err(e) => out.warn(format!("banner not rendered: {e}")),
        }
    }

    /// `Shown`, and the banner's line count as the status field `lines`.
    fn status(&self, res: &Resource, facts: &StatusFacts<'_>) -> KindStatus {
        let Some(file) = facts.artifacts.first() else { return KindStatus::default() };
        let written = file.operation.map_or(file.present, |op| op.result == OperationResult::Done);
        let (status, reason) = match written {
            true => (ConditionStatus::True, BANNER_IN_PLACE),
            false => (ConditionStatus::False, BANNER_PENDING),
        };
        let message = format!("/etc/routerd/motd.d/{}", file.name);
        let lines = res.external_spec::<MotdSpec>().map_or(0, |s| s.text.lines().count());
        KindStatus {
            conditions: vec![KindCondition { type_: SHOWN, status, reason, message }],
            fields: Some(serde_json::json!({ "lines": lines })),
        }
    }
}

/// Lists, writes and removes the banner files of one target.
pub struct MotdBackend {
    dir: PathBuf,
}

impl MotdBackend {
    /// The backend for `target`'s [`MOTD_DIR`].
    pub fn new(target: &Target) -> Self {
        Self { dir: target.path(MOTD_DIR) }
    }

    fn file_error(&self, path: PathBuf, source: std::io::Error) -> HostError {
        HostError::File { path, source }
    }

    fn write(&self, artifact: &Artifact) -> Result<(), HostError> {
        let ArtifactSpec::External(spec) = &artifact.spec else {
            return Err(HostError::WrongBackend {
                key: artifact.key.clone(),
                backend: self.apply_with(),
            });
        };
        let file: MotdFile = spec.attributes().map_err(|e| HostError::Invalid {
            key: artifact.key.clone(),
            message: e.to_string(),
        })?;
        if spec.name.contains('/') || spec.name.starts_with('.') {
            let message = "a banner's name must be a plain file name".to_owned();
            return Err(HostError::Invalid { key: artifact.key.clone(), message });
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| self.file_error(self.dir.clone(), e))?;
        let path = self.dir.join(&spec.name);
        let tmp = self.dir.join(format!(".{}.tmp", spec.name));
        std::fs::write(&tmp, &file.text).map_err(|e| self.file_error(tmp.clone(), e))?;
        std::fs::rename(&tmp, &path).map_err(|e| self.file_error(path, e))
    }

    fn list(&self) -> Result<Vec<Artifact>, HostError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.file_error(self.dir.clone(), e)),
        };
        let mut listed = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| self.file_error(self.dir.clone(), e))?;
            let Ok(name) = entry.file_name().into_string() else { continue };
            if name.starts_with('.') {
                continue;
            }
            let text = std::fs::read_to_string(entry.path())
                .map_err(|e| self.file_error(entry.path(), e))?;
            let spec = ExternalArtifactSpec::new(&MOTD_FILE, name, &MotdFile { text })
                .map_err(|e| HostError::Dump { what: "banners".into(), message: e.to_string() })?;
            listed.push(Artifact::new(ArtifactSpec::External(spec)));
        }
        Ok(listed)
    }
}

impl Backend for MotdBackend {
    fn apply_with(&self) -> ApplyWith {
        MOTD_FILE.family()
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        MOTD_FILE.alone()
    }

    fn observe<'a>(
        &'a self,
        _kind: ArtifactKind,
        _wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        Box::pin(async move { self.list() })
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { self.write(desired) })
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { self.write(desired) })
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            let path = self.dir.join(&observed.key.name);
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != ErrorKind::NotFound => Err(self.file_error(path, e)),
                _ => Ok(()),
            }
        })
    }
}

/// `E001`: how many banners the config declares.
struct MotdDoctor;

impl DoctorChecks for MotdDoctor {
    fn run(&self, config: &Config, _current: Option<&ResultDocument>, out: &mut Vec<DoctorCheck>) {
        let count = MOTD.resource_kind().map_or(0, |kind| config.resources_of(kind).count());
        out.push(DoctorCheck {
            area: "example".into(),
            code: "E001".into(),
            name: "login banners".into(),
            status: CheckStatus::Pass,
            detail: format!("{count} banner(s) declared"),
            remedy: String::new(),
        });
    }
}

/// Adds this crate's kinds, backend and doctor check to `registry`: the one line a binary
/// writes for it.
///
/// Errors: a kind's name is taken (a built-in kind or another crate's).
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    registry
        .resource_kind(&MOTD, MotdRender)?
        .artifact_kind(&MOTD_FILE)?
        .backend(|cx: &BackendContext<'_>| Ok(Arc::new(MotdBackend::new(cx.target)) as _))
        .doctor_checks(MotdDoctor);
    Ok(())
}
