//! The system bus connection shared by the D-Bus configurators of a session (systemd,
//! systemd-networkd, systemd-hostnamed): one connection, opened on first use, so a config that
//! touches none of them needs no bus.

use tokio::sync::OnceCell;
use zbus::Connection;

use crate::error::HostError;

/// A lazily opened connection to one bus.
pub struct SystemBus {
    address: Option<String>,
    conn: OnceCell<Connection>,
}

impl SystemBus {
    /// The bus at `address` (`unix:path=…`), or the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else
    /// `/run/dbus/system_bus_socket`) when `None`. Nothing is connected until first use.
    pub fn new(address: Option<String>) -> Self {
        Self { address, conn: OnceCell::new() }
    }

    /// The connection, opened on the first call.
    ///
    /// Errors: [`HostError::Bus`].
    pub(crate) async fn conn(&self) -> Result<&Connection, HostError> {
        self.conn
            .get_or_try_init(|| async {
                let bus = |e: zbus::Error| HostError::Bus(e.to_string());
                match &self.address {
                    None => Connection::system().await.map_err(bus),
                    Some(a) => zbus::connection::Builder::address(a.as_str())
                        .map_err(bus)?
                        .build()
                        .await
                        .map_err(bus),
                }
            })
            .await
    }

    /// Whether `name` has an owner on the bus: asked rather than activated, so a caller can
    /// tell "not running" from a failed call.
    ///
    /// Errors: [`HostError::Bus`].
    pub(crate) async fn has_owner(&self, name: &'static str) -> Result<bool, HostError> {
        let bus = |e: zbus::Error| HostError::Bus(e.to_string());
        let dbus = zbus::fdo::DBusProxy::new(self.conn().await?).await.map_err(bus)?;
        let name =
            zbus::names::BusName::try_from(name).map_err(|e| HostError::Bus(e.to_string()))?;
        dbus.name_has_owner(name).await.map_err(|e| HostError::Bus(e.to_string()))
    }
}
