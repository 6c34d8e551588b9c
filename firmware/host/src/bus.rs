//! The system bus connection of the D-Bus configurators (systemd, systemd-networkd,
//! systemd-hostnamed).

use zbus::Connection;

use crate::error::HostError;

/// Connects to the bus at `address` (`unix:path=…`), or to the system bus
/// (`DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`) when `None`.
///
/// Errors: [`HostError::Bus`].
pub(crate) async fn connect(address: Option<&str>) -> Result<Connection, HostError> {
    let bus = |e: zbus::Error| HostError::Bus(e.to_string());
    match address {
        None => Connection::system().await.map_err(bus),
        Some(a) => zbus::connection::Builder::address(a).map_err(bus)?.build().await.map_err(bus),
    }
}

/// Whether `name` has an owner on the bus of `conn`: asked rather than activated, so a caller
/// can tell "not running" from a failed call.
///
/// Errors: [`HostError::Bus`].
pub(crate) async fn has_owner(conn: &Connection, name: &'static str) -> Result<bool, HostError> {
    let bus = |e: zbus::Error| HostError::Bus(e.to_string());
    let dbus = zbus::fdo::DBusProxy::new(conn).await.map_err(bus)?;
    let name = zbus::names::BusName::try_from(name).map_err(|e| HostError::Bus(e.to_string()))?;
    dbus.name_has_owner(name).await.map_err(|e| HostError::Bus(e.to_string()))
}
