//! [`Rauc`]: the typed client of RAUC's `de.pengutronix.rauc.Installer` D-Bus interface.

use std::collections::HashMap;
use std::path::Path;

use zbus::message::Sequence;
use zbus::proxy::CacheProperties;
use zbus::zvariant::Value;
use zbus::{Connection, connection};

use crate::bundle::{self, BundleDigest, BundleInfo};
use crate::error::{Call, OtaError};
use crate::install::Installation;
use crate::proxy::InstallerProxy;
use crate::slot::{MarkState, Marked, SlotRef, SlotStatus};

/// The error message RAUC < 1.14 answers `InstallBundle` with when given
/// `require-manifest-hash` (`service.c`: "Unsupported key: %s"); checked before anything runs.
const UNSUPPORTED_MANIFEST_HASH: &str = "Unsupported key: require-manifest-hash";

/// A connection to the RAUC service.
///
/// Source of every call: RAUC's D-Bus API reference,
/// <https://rauc.readthedocs.io/en/latest/reference.html#d-bus-api>. Works with RAUC 1.8
/// (Debian 12, the QEMU test image) and later: where 1.8 lacks `InspectBundle` and
/// `require-manifest-hash`, the older call or a check on this side stands in (see
/// [`Rauc::inspect`], [`Rauc::install`]).
#[derive(Clone)]
pub struct Rauc {
    proxy: InstallerProxy<'static>,
}

impl Rauc {
    /// Connects to RAUC on the system bus (`None`) or on the bus at `address` (a D-Bus
    /// address such as `unix:path=/tmp/bus.sock`, for tests).
    ///
    /// Does not check that RAUC is running: the first call does.
    /// Errors: [`OtaError::Transport`] (`connect`) when the bus cannot be reached.
    pub async fn connect(address: Option<&str>) -> Result<Self, OtaError> {
        let fail = |source| OtaError::transport(Call::Connect, source);
        let conn = match address {
            None => Connection::system().await.map_err(fail)?,
            Some(address) => {
                connection::Builder::address(address).map_err(fail)?.build().await.map_err(fail)?
            }
        };
        Self::with_connection(&conn).await
    }

    /// Uses an existing bus connection (the supervisor's own, for example).
    ///
    /// Properties are read fresh on every call: RAUC's values change during an install and a
    /// cached copy would lag behind.
    /// Errors: [`OtaError::Transport`] (`connect`) when the proxy cannot be set up.
    pub async fn with_connection(conn: &Connection) -> Result<Self, OtaError> {
        let proxy = InstallerProxy::builder(conn)
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|source| OtaError::transport(Call::Connect, source))?;
        Ok(Self { proxy })
    }

    /// Checks a bundle's signature and reads its manifest, without installing.
    ///
    /// Uses `InspectBundle` (RAUC >= 1.9; digest: RAUC's manifest hash). On RAUC 1.8, which
    /// answers that with `UnknownMethod`, it uses `Info` and hashes the file here (digest:
    /// SHA-256 of the file); 1.8's `Info` reports every failure as just `rauc info error`
    /// (the reason goes to RAUC's log only).
    /// The signer ([`BundleInfo::signer`]) is read from the bundle once RAUC accepted it.
    /// Errors: [`OtaError::Refused`] for a bundle RAUC will not open (bad signature, not a
    /// bundle, truncated, wrong format); [`OtaError::Read`] when hashing the file fails.
    pub async fn inspect(&self, path: &Path) -> Result<BundleInfo, OtaError> {
        let mut info = self.inspect_manifest(path).await?;
        // RAUC accepted the signature; who made it is read from the bundle here.
        info.signer = match crate::signer::read(path) {
            Ok(signer) => Some(signer),
            Err(e) => {
                tracing::warn!("{}: no signer shown: {e}", path.display());
                None
            }
        };
        Ok(info)
    }

    async fn inspect_manifest(&self, path: &Path) -> Result<BundleInfo, OtaError> {
        let source = utf8(path)?;
        match self.proxy.inspect_bundle(source, HashMap::new()).await {
            Ok(info) => bundle::parse_inspect_reply(info),
            Err(zbus::Error::MethodError(name, _, _))
                if name.as_str() == "org.freedesktop.DBus.Error.UnknownMethod" =>
            {
                let (compatible, version) = self
                    .proxy
                    .info(source)
                    .await
                    .map_err(|e| OtaError::from_call(Call::Info, e))?;
                let hex = bundle::file_sha256(path).await?;
                Ok(bundle::from_info(compatible, version, hex))
            }
            Err(e) => Err(OtaError::from_call(Call::InspectBundle, e)),
        }
    }

    /// Installs the bundle at `path` into the other slot group, if it is still the bundle
    /// `expected` was inspected from; returns the running install.
    ///
    /// The signal match is added before `InstallBundle` is called, so the first progress
    /// step is seen. Checking `expected`:
    /// - [`BundleDigest::Manifest`]: passed to RAUC as `require-manifest-hash` (RAUC >= 1.14
    ///   refuses a different bundle itself, reported by [`crate::InstallEvent::Completed`]).
    ///   RAUC 1.9 to 1.13 refuse the key before doing anything; then the bundle is inspected
    ///   again here and installed only if its manifest hash still matches.
    /// - [`BundleDigest::File`] (RAUC 1.8): the file is hashed here right before
    ///   `InstallBundle`. A bundle swapped after that check is still signature- and
    ///   compatible-checked by RAUC; keep uploads in a directory only the supervisor writes.
    ///
    /// `ignore-compatible` is never set.
    /// Errors: [`OtaError::DigestMismatch`] (nothing installed); [`OtaError::Refused`] when
    /// RAUC refuses to start (busy: `Already processing a different method`);
    /// [`OtaError::Transport`]. Failures during the install (bad signature, wrong
    /// compatible, truncated bundle) arrive as `Completed { ok: false, last_error }`.
    pub async fn install(
        &self,
        path: &Path,
        expected: &BundleDigest,
    ) -> Result<Installation, OtaError> {
        let source = utf8(path)?;
        if let BundleDigest::File(_) = expected {
            check_digest(path, expected, BundleDigest::File(bundle::file_sha256(path).await?))?;
        }
        let mut installation = Installation::subscribe(&self.proxy).await?;
        let BundleDigest::Manifest(hash) = expected else {
            installation.started(self.install_bundle(source, None).await?);
            return Ok(installation);
        };
        let accepted = match self.install_bundle(source, Some(hash)).await {
            Err(OtaError::Refused { message, .. })
                if message.trim() == UNSUPPORTED_MANIFEST_HASH =>
            {
                let found = self.inspect(path).await?.digest;
                check_digest(path, expected, found)?;
                self.install_bundle(source, None).await?
            }
            other => other?,
        };
        installation.started(accepted);
        Ok(installation)
    }

    /// Every slot of `system.conf` with its status, sorted by name (RAUC sends them in hash
    /// table order).
    ///
    /// Errors: [`OtaError::Refused`] (`already processing a different method` during an
    /// install on RAUC 1.8), [`OtaError::UnexpectedReply`] for a mistyped key.
    pub async fn slots(&self) -> Result<Vec<SlotStatus>, OtaError> {
        let raw = self
            .proxy
            .get_slot_status()
            .await
            .map_err(|e| OtaError::from_call(Call::GetSlotStatus, e))?;
        let mut slots = raw
            .into_iter()
            .map(|(name, dict)| SlotStatus::from_dbus(name, dict))
            .collect::<Result<Vec<_>, _>>()?;
        slots.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(slots)
    }

    /// The name of the slot the boot loader will boot next, e.g. `rootfs.1`.
    ///
    /// Errors: [`OtaError::Refused`] when the boot loader backend cannot tell (RAUC's `noop`
    /// backend never can).
    pub async fn primary(&self) -> Result<String, OtaError> {
        self.proxy.get_primary().await.map_err(|e| OtaError::from_call(Call::GetPrimary, e))
    }

    /// Marks `slot` good, bad or active in the boot loader.
    ///
    /// Errors: [`OtaError::Refused`] with RAUC's reason (no such slot, no other slot,
    /// boot loader failed).
    pub async fn mark(&self, state: MarkState, slot: &SlotRef) -> Result<Marked, OtaError> {
        let (slot, message) = self
            .proxy
            .mark(state.as_str(), &slot.to_string())
            .await
            .map_err(|e| OtaError::from_call(Call::Mark, e))?;
        Ok(Marked { slot, message })
    }

    /// `Operation`: `idle` or `installing`.
    pub async fn operation(&self) -> Result<String, OtaError> {
        property(Call::Property("Operation"), self.proxy.operation().await)
    }

    /// `LastError`: the message of the last failed install, empty when none failed.
    pub async fn last_error(&self) -> Result<String, OtaError> {
        property(Call::Property("LastError"), self.proxy.last_error().await)
    }

    /// `Progress` as an [`crate::InstallEvent::Progress`]: the last step RAUC reported.
    pub async fn progress(&self) -> Result<crate::InstallEvent, OtaError> {
        let step = property(Call::Property("Progress"), self.proxy.progress().await)?;
        crate::install::progress_event(step)
    }

    /// `Compatible`: the system's compatible string from `system.conf`.
    pub async fn compatible(&self) -> Result<String, OtaError> {
        property(Call::Property("Compatible"), self.proxy.compatible().await)
    }

    /// `Variant`: the system's variant, empty when none is configured.
    pub async fn variant(&self) -> Result<String, OtaError> {
        property(Call::Property("Variant"), self.proxy.variant().await)
    }

    /// `BootSlot`: the boot name (`A`, `B`) of the slot the system booted from.
    pub async fn boot_slot(&self) -> Result<String, OtaError> {
        property(Call::Property("BootSlot"), self.proxy.boot_slot().await)
    }

    /// Calls `InstallBundle`; returns where its reply was received, so that signals of an
    /// install that ended before this one started can be told apart.
    async fn install_bundle(
        &self,
        source: &str,
        manifest_hash: Option<&str>,
    ) -> Result<Sequence, OtaError> {
        let mut args: HashMap<&str, Value<'_>> = HashMap::new();
        if let Some(hash) = manifest_hash {
            args.insert("require-manifest-hash", Value::from(hash));
        }
        let reply = self
            .proxy
            .inner()
            .call_method("InstallBundle", &(source, args))
            .await
            .map_err(|e| OtaError::from_call(Call::InstallBundle, e))?;
        Ok(reply.recv_position())
    }
}

/// Errors: [`OtaError::DigestMismatch`] unless `found` is `expected`.
fn check_digest(path: &Path, expected: &BundleDigest, found: BundleDigest) -> Result<(), OtaError> {
    if found == *expected {
        return Ok(());
    }
    Err(OtaError::DigestMismatch { path: path.into(), expected: expected.clone(), found })
}

fn property<T>(call: Call, value: zbus::Result<T>) -> Result<T, OtaError> {
    value.map_err(|e| OtaError::from_call(call, e))
}

fn utf8(path: &Path) -> Result<&str, OtaError> {
    path.to_str().ok_or_else(|| OtaError::PathNotUtf8 { path: path.into() })
}
