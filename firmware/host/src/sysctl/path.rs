//! Dotted sysctl keys to `/proc/sys` paths. Pure: [`candidates`] does not touch the file
//! system; [`super`] picks the first candidate that exists inside the target namespace.
//!
//! `sysctl(8)` maps `a.b.c` to `/proc/sys/a/b/c`. Interface names may contain dots
//! (`eth0.100`), so for `net.ipv{4,6}.{conf,neigh}.<ifname>.<leaf>` everything between the
//! family's `conf.`/`neigh.` and the last `.` is the interface name (leaf names never contain
//! dots).

use std::path::{Path, PathBuf};

/// Key prefixes whose next component is an interface name (or `all`, `default`).
const PER_INTERFACE: [&str; 4] =
    ["net.ipv4.conf.", "net.ipv6.conf.", "net.ipv4.neigh.", "net.ipv6.neigh."];

/// Why a key cannot name a sysctl file.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum KeyError {
    /// Empty key, or an empty component (`net..x`, `.net`, `net.`).
    #[error("sysctl key has an empty component")]
    Empty,
    /// `/`, `..` or NUL in the key: it could leave `/proc/sys`.
    #[error("sysctl key must be dotted and must not contain '/', '..' or NUL")]
    Forbidden,
}

/// The paths under `root` (`/proc/sys`) that `key` may name, best first.
///
/// Shape: one or two paths. For a per-interface key the first one reads the interface name as
/// everything between `conf.`/`neigh.` and the last dot; the plain dots-to-slashes path follows
/// when it differs.
/// Errors: [`KeyError`] for keys that are empty or could escape `root`.
pub(crate) fn candidates(root: &Path, key: &str) -> Result<Vec<PathBuf>, KeyError> {
    if key.contains('/') || key.contains("..") || key.contains('\0') {
        return Err(KeyError::Forbidden);
    }
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(KeyError::Empty);
    }
    let plain = root.join(key.replace('.', "/"));
    let mut out = Vec::with_capacity(2);
    if let Some(per_interface) = per_interface_path(root, key)
        && per_interface != plain
    {
        out.push(per_interface);
    }
    out.push(plain);
    Ok(out)
}

fn per_interface_path(root: &Path, key: &str) -> Option<PathBuf> {
    let prefix = PER_INTERFACE.iter().find(|p| key.starts_with(**p))?;
    let (ifname, leaf) = key[prefix.len()..].rsplit_once('.')?;
    Some(root.join(prefix.replace('.', "/")).join(ifname).join(leaf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(key: &str) -> Vec<String> {
        candidates(Path::new("/proc/sys"), key)
            .expect("valid key")
            .into_iter()
            .map(|p| p.display().to_string())
            .collect()
    }

    #[test]
    fn plain_key_maps_dots_to_slashes() {
        assert_eq!(paths("net.ipv4.ip_forward"), ["/proc/sys/net/ipv4/ip_forward"]);
        assert_eq!(paths("kernel.hostname"), ["/proc/sys/kernel/hostname"]);
    }

    #[test]
    fn interface_key_without_dots_has_one_candidate() {
        assert_eq!(paths("net.ipv4.conf.wan.rp_filter"), ["/proc/sys/net/ipv4/conf/wan/rp_filter"]);
    }

    #[test]
    fn interface_name_with_dots_is_everything_up_to_the_last_dot() {
        assert_eq!(
            paths("net.ipv4.conf.eth0.100.rp_filter"),
            [
                "/proc/sys/net/ipv4/conf/eth0.100/rp_filter",
                "/proc/sys/net/ipv4/conf/eth0/100/rp_filter"
            ]
        );
        assert_eq!(
            paths("net.ipv6.conf.lan.a.b.accept_ra")[0],
            "/proc/sys/net/ipv6/conf/lan.a.b/accept_ra"
        );
        assert_eq!(
            paths("net.ipv4.neigh.br.0.gc_stale_time")[0],
            "/proc/sys/net/ipv4/neigh/br.0/gc_stale_time"
        );
    }

    #[test]
    fn keys_that_could_escape_proc_sys_are_rejected() {
        let root = Path::new("/proc/sys");
        assert_eq!(candidates(root, "net/ipv4/ip_forward"), Err(KeyError::Forbidden));
        assert_eq!(candidates(root, "net.ipv4.conf...x"), Err(KeyError::Forbidden));
        assert_eq!(candidates(root, "net..ipv4"), Err(KeyError::Forbidden));
        assert_eq!(candidates(root, "a\0b"), Err(KeyError::Forbidden));
    }

    #[test]
    fn keys_with_empty_components_are_rejected() {
        let root = Path::new("/proc/sys");
        assert_eq!(candidates(root, ""), Err(KeyError::Empty));
        assert_eq!(candidates(root, ".net.ipv4"), Err(KeyError::Empty));
        assert_eq!(candidates(root, "net.ipv4."), Err(KeyError::Empty));
    }
}
