//! systemd-hostnamed backend (`applyWith: hostnamed`) for `linux.hostname`, over D-Bus
//! (org.freedesktop.hostname1(5)).
//!
//! The one artifact is named `system`. Inventory reads hostnamed's `StaticHostname` (the
//! content of `/etc/hostname`) and `Hostname` (the kernel's, `uname -n`); the configurator calls
//! `SetStaticHostname`, which writes `/etc/hostname` and sets the kernel's hostname from it, then
//! reads both back. The hostname is global host state: reconciled, never deleted (seed 000,
//! "Explicit non-cleanup cases"). hostnamed is bus-activated on a router, so a call starts it.

use futures::future::BoxFuture;
use std::sync::Arc;

use zbus::proxy::CacheProperties;

use crate::artifact::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, SystemHostnameSpec};
use crate::backend::Backend;
use crate::bus::SystemBus;
use crate::error::HostError;
use crate::systemd::service;

/// The `applyWith` name of this backend.
const APPLY_WITH: crate::kinds::ApplyWith = crate::kinds::ApplyWith::Hostnamed;

/// The name of the one `linux.hostname` artifact.
pub const SYSTEM: &str = "system";

/// `org.freedesktop.hostname1` at `/org/freedesktop/hostname1` (private: zbus generates items
/// without docs).
mod proxy {
    #[zbus::proxy(
        interface = "org.freedesktop.hostname1",
        default_service = "org.freedesktop.hostname1",
        default_path = "/org/freedesktop/hostname1"
    )]
    pub(super) trait Hostname1 {
        /// `SetStaticHostname(s hostname, b interactive)`: writes `/etc/hostname` (an empty
        /// name removes it) and updates the kernel's hostname.
        fn set_static_hostname(&self, hostname: &str, interactive: bool) -> zbus::Result<()>;

        /// `StaticHostname` (s): `/etc/hostname`, empty when unset.
        #[zbus(property)]
        fn static_hostname(&self) -> zbus::Result<String>;

        /// `Hostname` (s): the kernel's hostname.
        #[zbus(property)]
        fn hostname(&self) -> zbus::Result<String>;
    }
}

/// The system hostname through systemd-hostnamed.
pub struct HostnamedBackend {
    bus: Arc<SystemBus>,
}

impl HostnamedBackend {
    /// The hostname through the hostnamed on `bus`.
    pub fn new(bus: Arc<SystemBus>) -> Self {
        Self { bus }
    }

    async fn proxy(&self) -> Result<proxy::Hostname1Proxy<'static>, HostError> {
        proxy::Hostname1Proxy::builder(self.bus.conn().await?)
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|e| HostError::Bus(e.to_string()))
    }

    /// Both hostnames as hostnamed reports them.
    async fn read(&self, key: &ArtifactKey) -> Result<SystemHostnameSpec, HostError> {
        let p = self.proxy().await?;
        let hostname = p.static_hostname().await.map_err(|e| service(key, "read hostname", e))?;
        let kernel = p.hostname().await.map_err(|e| service(key, "read hostname", e))?;
        Ok(SystemHostnameSpec { hostname, kernel })
    }

    async fn set(&self, desired: &Artifact) -> Result<(), HostError> {
        let key = &desired.key;
        let ArtifactSpec::Hostname(want) = &desired.spec else {
            return Err(HostError::WrongBackend { key: key.clone(), backend: APPLY_WITH });
        };
        let p = self.proxy().await?;
        p.set_static_hostname(&want.hostname, false)
            .await
            .map_err(|e| service(key, "set hostname", e))?;
        let got = self.read(key).await?;
        if got.hostname != want.hostname || got.kernel != want.kernel {
            return Err(HostError::Service {
                key: key.clone(),
                op: "set hostname",
                message: format!(
                    "systemd-hostnamed reports static hostname {:?} and kernel hostname {:?} \
                     after setting {:?}",
                    got.hostname, got.kernel, want.hostname
                ),
            });
        }
        Ok(())
    }
}

impl Backend for HostnamedBackend {
    fn apply_with(&self) -> crate::kinds::ApplyWith {
        APPLY_WITH
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        &[ArtifactKind::Hostname]
    }

    fn observes_wanted_only(&self) -> bool {
        true
    }

    fn observe<'a>(
        &'a self,
        _kind: ArtifactKind,
        wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        Box::pin(async move {
            let Some(key) = wanted.iter().find(|k| k.name == SYSTEM) else {
                return Ok(Vec::new());
            };
            // Unreachable hostnamed (no bus, not installed): nothing observed, so the plan
            // sets the hostname and that operation says what is wrong.
            match self.read(key).await {
                Ok(spec) => Ok(vec![Artifact::new(ArtifactSpec::Hostname(spec))]),
                Err(HostError::Bus(_) | HostError::Service { .. }) => Ok(Vec::new()),
                Err(e) => Err(e),
            }
        })
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(self.set(desired))
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(self.set(desired))
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            Err(HostError::Invalid {
                key: observed.key.clone(),
                message: "the hostname is reconciled, never deleted".into(),
            })
        })
    }
}
