//! D-Bus proxy of systemd-networkd's manager, as org.freedesktop.network1(5) documents it
//! (<https://www.freedesktop.org/software/systemd/man/latest/org.freedesktop.network1.html>).
//! Only what the DHCP client configurator calls.

/// `org.freedesktop.network1.Manager` at `/org/freedesktop/network1`.
#[zbus::proxy(
    interface = "org.freedesktop.network1.Manager",
    default_service = "org.freedesktop.network1",
    default_path = "/org/freedesktop/network1"
)]
pub(crate) trait Manager {
    /// `Reload()`: `networkctl reload`; re-reads the `.network` files and reconfigures every
    /// link whose file was added, changed or removed.
    fn reload(&self) -> zbus::Result<()>;

    /// `Describe() -> s json`: `networkctl status --json=short`, every link with its
    /// `NetworkFile`, states and addresses.
    fn describe(&self) -> zbus::Result<String>;
}
