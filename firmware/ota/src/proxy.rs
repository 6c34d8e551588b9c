//! The D-Bus proxy of RAUC's `de.pengutronix.rauc.Installer` interface at `/`, as RAUC 1.8 and
//! later export it. Private: the crate's typed API (`Rauc`) is the only user.
//!
//! Source: RAUC's D-Bus API reference,
//! <https://rauc.readthedocs.io/en/latest/reference.html#d-bus-api>, checked against the
//! introspection data of a running RAUC 1.8 service (the crate's integration tests).
//! `InspectBundle` exists from RAUC 1.9 on; 1.8 answers it with
//! `org.freedesktop.DBus.Error.UnknownMethod`, and only has the older `Info`.
//! `InstallBundle(s source, a{sv} args)` is called through the untyped `call_method` in
//! `rauc.rs`, whose reply message tells where in the received stream the install started. The
//! `Completed` signal and the property changes are read from one message stream in
//! `install.rs`, not through this proxy, so their relative order is kept.

use std::collections::HashMap;

use zbus::zvariant::{OwnedValue, Value};

/// RAUC's well-known bus name on the system bus.
pub(crate) const SERVICE: &str = "de.pengutronix.rauc";
/// The interface every method, property and signal below belongs to.
pub(crate) const INTERFACE: &str = "de.pengutronix.rauc.Installer";
/// The object RAUC exports the interface at.
pub(crate) const PATH: &str = "/";

#[zbus::proxy(
    interface = "de.pengutronix.rauc.Installer",
    default_service = "de.pengutronix.rauc",
    default_path = "/"
)]
pub(crate) trait Installer {
    /// `InspectBundle(s source, a{sv} args) -> a{sv} info` (RAUC >= 1.9).
    fn inspect_bundle(
        &self,
        source: &str,
        args: HashMap<&str, Value<'_>>,
    ) -> zbus::Result<HashMap<String, OwnedValue>>;

    /// `Info(s bundle) -> (s compatible, s version)`: the pre-1.9 inspect.
    fn info(&self, bundle: &str) -> zbus::Result<(String, String)>;

    /// `Mark(s state, s slot_identifier) -> (s slot_name, s message)`.
    fn mark(&self, state: &str, slot_identifier: &str) -> zbus::Result<(String, String)>;

    /// `GetSlotStatus() -> a(sa{sv})`.
    fn get_slot_status(&self) -> zbus::Result<Vec<(String, HashMap<String, OwnedValue>)>>;

    /// `GetPrimary() -> s`.
    fn get_primary(&self) -> zbus::Result<String>;

    /// `Operation` (s): `idle` or `installing`.
    #[zbus(property)]
    fn operation(&self) -> zbus::Result<String>;

    /// `LastError` (s): the message of the last failed install, empty when none.
    #[zbus(property)]
    fn last_error(&self) -> zbus::Result<String>;

    /// `Progress` ((isi)): percentage, message, nesting depth.
    #[zbus(property)]
    fn progress(&self) -> zbus::Result<(i32, String, i32)>;

    /// `Compatible` (s): the system's compatible string from system.conf.
    #[zbus(property)]
    fn compatible(&self) -> zbus::Result<String>;

    /// `Variant` (s): the system's variant, empty when none is configured.
    #[zbus(property)]
    fn variant(&self) -> zbus::Result<String>;

    /// `BootSlot` (s): the boot name of the slot the system booted from.
    #[zbus(property)]
    fn boot_slot(&self) -> zbus::Result<String>;
}
