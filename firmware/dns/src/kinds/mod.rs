//! The resource kinds of the DNS controller, one module per kind (or per family of alike
//! kinds): spec, validation and render together.

pub mod catalog;
pub mod check;
pub mod dhcp_derived;
pub mod index;
pub mod key;
pub mod names;
pub mod records;
pub mod server;
pub mod zone;

/// Whether `name` may name a key, a server or a unit: letters, digits, `-`, `_` and `.`,
/// not starting with `.` or `-` (BIND names keys by it; systemd units carry it).
pub fn is_bind_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && !name.starts_with(['.', '-'])
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}
