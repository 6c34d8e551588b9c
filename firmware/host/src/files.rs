//! Managed-file backend (`applyWith: files`) for `file`: blocks routerd writes into files,
//!
//! ```text
//! # routerd block net.ipv4.ip_forward
//! net.ipv4.ip_forward = 1
//! # routerd end
//! ```
//!
//! Each artifact is one block, named `path#block`. A change rewrites only its block, in place
//! (or appends it), through a temporary file and a rename; the operator's lines around the
//! blocks are kept as they are. A file routerd creates starts with a comment saying so, and is
//! removed again when its last block goes and nothing but that comment is left. The file's mode
//! is the blocks' (`0600` for secrets), set on every write.
//!
//! `ppp.secret` artifacts are blocks of the same form in pppd's secrets files, holding one entry
//! each ([`PppSecretSpec`]): the entry line carries the password, so it is built here, written,
//! and read back into a [`Secret`], and never appears in an artifact's attributes.
//!
//! No daemon is told: the files this backend writes are read when their consumer starts
//! (`/etc/sysctl.d` by systemd-sysctl at boot). Inventory reads the files the engine names
//! (desired and ledger-owned blocks) and lists every block in them, so orphaned blocks of a
//! file routerd writes are seen.

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use futures::future::BoxFuture;

use crate::artifact::{
    Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, FileBlockSpec, PppSecretSpec, PppSecretValue,
};
use crate::backend::Backend;
use crate::error::HostError;
use crate::file::{Markers, write_atomically, write_or_remove};
use crate::ppp;
use crate::secret::Secret;
use crate::target::Target;

/// The `applyWith` name of this backend.
const APPLY_WITH: crate::kinds::ApplyWith = crate::kinds::ApplyWith::Files;

const MARKERS: Markers = Markers { begin: "# routerd block ", end: "# routerd end" };

/// The blocks of a file's `text` as the `file` kind writes them: `(block name, lines)` in file
/// order. For a controller crate that reads a file routerd writes for it (the DNS endpoints).
pub fn blocks(text: &str) -> Vec<(String, Vec<String>)> {
    MARKERS.parse(text)
}

/// The first line of a file routerd created.
const HEADER: &str = "# Written by routerd from router.yaml: edit router.yaml, not the blocks \
                      marked \"routerd block\". Lines outside them are left alone.";

/// Blocks in files under one target's root.
pub struct FilesBackend {
    target: Target,
    /// One change at a time: each is a read-modify-write of a file.
    lock: tokio::sync::Mutex<()>,
}

impl FilesBackend {
    /// Files under `target`'s root.
    pub fn new(target: &Target) -> Self {
        Self { target: target.clone(), lock: tokio::sync::Mutex::new(()) }
    }

    fn host_path(&self, path: &str) -> PathBuf {
        self.target.path(path)
    }

    /// The file's text and mode bits, `None` when it does not exist.
    fn read(&self, path: &str) -> Result<Option<(String, u32)>, HostError> {
        let p = self.host_path(path);
        let err = |source| HostError::File { path: p.clone(), source };
        match std::fs::read_to_string(&p) {
            Ok(text) => {
                let mode = std::fs::metadata(&p).map_err(err)?.permissions().mode() & 0o7777;
                Ok(Some((text, mode)))
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(err(e)),
        }
    }

    /// Every block of the files `wanted` names, as artifacts of `kind`.
    fn list(&self, kind: ArtifactKind, wanted: &[ArtifactKey]) -> Result<Vec<Artifact>, HostError> {
        let paths: BTreeSet<&str> =
            wanted.iter().filter_map(|k| k.name.split_once('#').map(|(p, _)| p)).collect();
        let mut out = Vec::new();
        for path in paths {
            let Some((text, mode)) = self.read(path)? else { continue };
            for (block, lines) in MARKERS.parse(&text) {
                let spec = match kind {
                    ArtifactKind::PppSecret => ppp_secret(path, block, &lines, mode),
                    _ => ArtifactSpec::FileBlock(FileBlockSpec {
                        path: path.to_owned(),
                        block,
                        lines,
                        mode,
                    }),
                };
                out.push(Artifact::new(spec));
            }
        }
        Ok(out)
    }

    /// Sets (`Some` lines) or removes one block of `spec`'s file.
    async fn change(&self, at: Place<'_>, lines: Option<&[String]>) -> Result<(), HostError> {
        let _guard = self.lock.lock().await;
        let before = self.read(at.path)?;
        let text = before.as_ref().map(|(t, _)| t.as_str());
        let after = set_block(text.unwrap_or(""), at.block, lines, text.is_none());
        let p = self.host_path(at.path);
        if lines.is_none() && is_bare(&after) {
            return write_or_remove(&p, None);
        }
        // A removal keeps the file's mode; a set gives it the block's.
        let mode = match (lines, &before) {
            (None, Some((_, mode))) => *mode,
            _ => at.mode,
        };
        write_atomically(&p, after.as_bytes(), mode)
    }
}

/// `text` with block `name` replaced in place by `lines`, appended when absent, or removed
/// (`None`). Every other line is kept. `new_file`: `text` is empty because the file does not
/// exist yet, so it starts with routerd's header.
fn set_block(text: &str, name: &str, lines: Option<&[String]>, new_file: bool) -> String {
    let mut out = String::new();
    if new_file {
        out.push_str(HEADER);
        out.push('\n');
    }
    let mut placed = false;
    let mut skipping = false;
    for line in text.lines() {
        if skipping {
            // The block ends at its end marker, or where another block begins (a block cut
            // short by hand).
            if line == MARKERS.end {
                skipping = false;
                continue;
            }
            if !line.starts_with(MARKERS.begin) {
                continue;
            }
            skipping = false;
        }
        if line.strip_prefix(MARKERS.begin).is_some_and(|n| n.trim() == name) {
            skipping = true;
            if let (Some(l), false) = (lines, placed) {
                MARKERS.push_tight(&mut out, name, l);
                placed = true;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if let (Some(l), false) = (lines, placed) {
        MARKERS.push_tight(&mut out, name, l);
    }
    out
}

/// Whether `text` holds nothing but routerd's header and blank lines.
fn is_bare(text: &str) -> bool {
    text.lines().all(|l| l.trim().is_empty() || l == HEADER)
}

/// Where a block goes: its file, its name and the file's mode.
#[derive(Clone, Copy)]
struct Place<'a> {
    path: &'a str,
    block: &'a str,
    mode: u32,
}

/// The observed form of a block of a pppd secrets file: its one entry, or (a block routerd
/// cannot read as one entry) a secret standing for the whole block, so the entry differs from
/// any desired one and the block's text still appears in no document.
fn ppp_secret(path: &str, block: String, lines: &[String], mode: u32) -> ArtifactSpec {
    let (client, secret) = ppp::parse_block(lines)
        .unwrap_or_else(|| (String::new(), PppSecretValue::Inline(Secret::new(lines.join("\n")))));
    ArtifactSpec::PppSecret(PppSecretSpec { path: path.to_owned(), block, client, secret, mode })
}

/// The place and lines of a `file` or `ppp.secret` artifact, checked: a path routerd may not
/// write or a name or line that would break the file's blocks is refused. The lines of a
/// `ppp.secret` hold its secret: they go to the file and nowhere else.
fn block(a: &Artifact) -> Result<(Place<'_>, Vec<String>), HostError> {
    let bad = |message: String| HostError::Invalid { key: a.key.clone(), message };
    let (at, lines) = match &a.spec {
        ArtifactSpec::FileBlock(f) => {
            (Place { path: &f.path, block: &f.block, mode: f.mode }, f.lines.clone())
        }
        ArtifactSpec::PppSecret(p) => {
            let line = ppp::entry_line(&p.client, &p.secret).map_err(bad)?;
            (Place { path: &p.path, block: &p.block, mode: p.mode }, vec![line])
        }
        _ => return Err(HostError::WrongBackend { key: a.key.clone(), backend: APPLY_WITH }),
    };
    let p = std::path::Path::new(at.path);
    let plain = p.is_absolute()
        && p.components().all(|c| !matches!(c, std::path::Component::ParentDir))
        && !at.path.ends_with('/');
    if !plain || at.path.contains(['#', '\n']) {
        return Err(bad(format!("{:?} is not an absolute file path without `..` or `#`", at.path)));
    }
    if at.block.trim().is_empty() || at.block.trim() != at.block || !MARKERS.fits(at.block) {
        return Err(bad(format!("{:?} cannot name a block", at.block)));
    }
    if !lines.iter().all(|l| MARKERS.fits(l) && !l.starts_with(MARKERS.begin)) {
        return Err(bad("a line contains a line break or a block marker".into()));
    }
    if at.mode & !0o777 != 0 {
        return Err(bad(format!("mode {:o} is not a set of permission bits", at.mode)));
    }
    Ok((at, lines))
}

impl Backend for FilesBackend {
    fn apply_with(&self) -> crate::kinds::ApplyWith {
        APPLY_WITH
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        &[ArtifactKind::File, ArtifactKind::PppSecret]
    }

    /// Files cannot be listed: the engine names the ones routerd writes.
    fn observes_wanted_only(&self) -> bool {
        true
    }

    fn observe<'a>(
        &'a self,
        kind: ArtifactKind,
        wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        Box::pin(async move { self.list(kind, wanted) })
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            let (at, lines) = block(desired)?;
            self.change(at, Some(&lines)).await
        })
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        self.create(desired)
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            // Removing a block needs only its place: an unreadable observed entry goes too.
            let at = match &observed.spec {
                ArtifactSpec::PppSecret(p) => {
                    Place { path: &p.path, block: &p.block, mode: p.mode }
                }
                _ => block(observed)?.0,
            };
            self.change(at, None).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(path: &str, name: &str, lines: &[&str], mode: u32) -> FileBlockSpec {
        FileBlockSpec {
            path: path.into(),
            block: name.into(),
            lines: lines.iter().map(|l| l.to_string()).collect(),
            mode,
        }
    }

    fn art(s: FileBlockSpec) -> Artifact {
        Artifact::new(ArtifactSpec::FileBlock(s))
    }

    #[tokio::test]
    async fn blocks_are_set_in_place_keep_the_operators_lines_and_take_the_file_when_last() {
        let root = tempfile::tempdir().expect("tempdir");
        let target = Target::new(None, Some(root.path().to_path_buf()));
        let files = FilesBackend::new(&target);
        let path = "/etc/sysctl.d/90-routerd.conf";
        let a = spec(path, "net.ipv4.ip_forward", &["net.ipv4.ip_forward = 1"], 0o644);
        let b = spec(path, "vm.swappiness", &["vm.swappiness = 10"], 0o644);
        files.create(&art(a.clone())).await.expect("a");
        files.create(&art(b.clone())).await.expect("b");
        let host = target.path(path);
        // The operator adds a line between the blocks.
        let text = std::fs::read_to_string(&host).expect("file");
        assert!(text.starts_with(HEADER), "{text}");
        std::fs::write(
            &host,
            text.replace(
                "# routerd end\n# routerd block vm",
                "# routerd end\nkernel.panic = 5\n# routerd block vm",
            ),
        )
        .expect("hand edit");

        let a2 = spec(path, "net.ipv4.ip_forward", &["net.ipv4.ip_forward = 0"], 0o644);
        files.modify(&art(a.clone()), &art(a2.clone())).await.expect("modify");
        let text = std::fs::read_to_string(&host).expect("file");
        let order: Vec<usize> = ["ip_forward = 0", "kernel.panic = 5", "vm.swappiness = 10"]
            .iter()
            .map(|l| text.find(l).unwrap_or_else(|| panic!("{l} missing: {text}")))
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "in place: {text}");
        assert!(!text.contains("ip_forward = 1"));

        let wanted = [ArtifactKey::new(ArtifactKind::File, a.key_name())];
        let listed = files.list(ArtifactKind::File, &wanted).expect("list");
        assert_eq!(listed, vec![art(a2.clone()), art(b.clone())], "every block of the file");

        files.delete(&art(a2)).await.expect("delete a");
        files.delete(&art(b)).await.expect("delete b");
        let text = std::fs::read_to_string(&host).expect("the operator's line keeps the file");
        assert!(
            text.contains("kernel.panic = 5\n") && !text.contains("# routerd block "),
            "{text}"
        );
        std::fs::write(&host, format!("{HEADER}\n")).expect("only the header left");
        let c = spec(path, "c", &["x = 1"], 0o644);
        files.create(&art(c.clone())).await.expect("c");
        files.delete(&art(c)).await.expect("delete c");
        assert!(!host.exists(), "nothing but routerd's header: the file goes");
    }

    #[tokio::test]
    async fn the_mode_is_the_blocks_and_drift_in_it_is_seen() {
        let root = tempfile::tempdir().expect("tempdir");
        let target = Target::new(None, Some(root.path().to_path_buf()));
        let files = FilesBackend::new(&target);
        let s = spec("/etc/ppp/secret", "peer", &["user * pass"], 0o600);
        files.create(&art(s.clone())).await.expect("create");
        let host = target.path("/etc/ppp/secret");
        let mode = std::fs::metadata(&host).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let listed = files
            .list(ArtifactKind::File, &[ArtifactKey::new(ArtifactKind::File, s.key_name())])
            .expect("l");
        let drift = art(s).spec.drift(&listed[0].spec);
        assert_eq!(drift.len(), 1);
        assert_eq!(drift[0].attribute, "mode");
    }

    #[tokio::test]
    async fn a_ppp_secret_is_written_as_one_entry_read_back_and_shown_only_as_a_digest() {
        let root = tempfile::tempdir().expect("tempdir");
        let target = Target::new(None, Some(root.path().to_path_buf()));
        let files = FilesBackend::new(&target);
        let path = "/etc/ppp/chap-secrets";
        let password = r#"s3cret "quoted""#;
        let desired = Artifact::new(ArtifactSpec::PppSecret(PppSecretSpec {
            path: path.into(),
            block: "wan".into(),
            client: "alice@isp.example".into(),
            secret: PppSecretValue::Inline(Secret::new(password)),
            mode: 0o600,
        }));
        // The operator's own entry stays.
        let host = target.path(path);
        std::fs::create_dir_all(host.parent().expect("dir")).expect("mkdir");
        std::fs::write(&host, "bob * other *\n").expect("operator's entry");
        files.create(&desired).await.expect("create");
        let text = std::fs::read_to_string(&host).expect("file");
        assert!(text.contains(r#""alice@isp.example" * "s3cret \"quoted\"" *"#), "{text}");
        assert!(text.starts_with("bob * other *\n"), "{text}");
        let mode = std::fs::metadata(&host).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);

        let wanted = [desired.key.clone()];
        let listed = files.list(ArtifactKind::PppSecret, &wanted).expect("list");
        assert_eq!(listed, vec![desired.clone()], "read back equal");
        // Changed by hand: the drift names the secret by digests only.
        std::fs::write(&host, text.replace("s3cret", "guess")).expect("hand edit");
        let listed = files.list(ArtifactKind::PppSecret, &wanted).expect("list");
        let drift = desired.spec.drift(&listed[0].spec);
        assert_eq!(drift.len(), 1, "{drift:?}");
        assert_eq!(drift[0].attribute, "secret");
        let shown = serde_json::to_string(&(&drift, &listed, &desired)).expect("json");
        assert!(!shown.contains("s3cret") && !shown.contains("guess"), "{shown}");

        files.delete(&listed[0]).await.expect("delete");
        let text = std::fs::read_to_string(&host).expect("operator's entry keeps the file");
        assert!(!text.contains("alice") && text.contains("bob * other *"), "{text}");
    }

    #[test]
    fn paths_names_and_lines_that_would_escape_are_refused() {
        let ok = spec("/etc/sysctl.d/90-routerd.conf", "k", &["k = 1"], 0o644);
        assert!(block(&art(ok.clone())).is_ok());
        let secret = |password: &str| {
            Artifact::new(ArtifactSpec::PppSecret(PppSecretSpec {
                path: "/etc/ppp/pap-secrets".into(),
                block: "wan".into(),
                client: "u".into(),
                secret: PppSecretValue::Inline(Secret::new(password)),
                mode: 0o600,
            }))
        };
        assert!(block(&secret("fine")).is_ok());
        let Err(HostError::Invalid { message, .. }) = block(&secret("@/etc/shadow")) else {
            panic!("an inline secret naming a file is refused")
        };
        assert!(!message.contains("shadow"), "{message}");
        for bad in [
            FileBlockSpec { path: "etc/x".into(), ..ok.clone() },
            FileBlockSpec { path: "/etc/../x".into(), ..ok.clone() },
            FileBlockSpec { path: "/etc/x#y".into(), ..ok.clone() },
            FileBlockSpec { block: " k".into(), ..ok.clone() },
            FileBlockSpec { lines: vec!["# routerd end".into()], ..ok.clone() },
            FileBlockSpec { lines: vec!["a\nb".into()], ..ok.clone() },
            FileBlockSpec { mode: 0o4755, ..ok.clone() },
        ] {
            assert!(matches!(block(&art(bad.clone())), Err(HostError::Invalid { .. })), "{bad:?}");
        }
    }
}
