//! Files of the file-based configurators (units, dnsmasq). [`write_atomically`] and
//! [`Markers`] are public for the file-based backends of controller crates (the DNS
//! controller's BIND configuration); the other helpers stay the host crate's.

use std::io::ErrorKind;
use std::path::Path;

use crate::error::HostError;

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader (systemd, a daemon) never sees half a file. Creates the directory.
///
/// Errors: [`HostError::File`].
pub fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> Result<(), HostError> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let err = |source| HostError::File { path: path.to_path_buf(), source };
    let dir = path.parent().ok_or_else(|| err(ErrorKind::InvalidInput.into()))?;
    std::fs::create_dir_all(dir).map_err(err)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.routerd-tmp"));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(&tmp)
        .map_err(err)?;
    // The mode as asked, whatever the process's umask (routerd.service runs with 0077, and
    // daemons that drop privileges, systemd-networkd, must read their files).
    f.set_permissions(std::fs::Permissions::from_mode(mode)).map_err(err)?;
    f.write_all(bytes).and_then(|()| f.sync_all()).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// Writes `text` to `path` ([`write_atomically`], mode 0644), or removes the file for `None`
/// (absent already is fine).
///
/// Errors: [`HostError::File`].
pub(crate) fn write_or_remove(path: &Path, text: Option<&str>) -> Result<(), HostError> {
    match text {
        Some(t) => write_atomically(path, t.as_bytes(), 0o644),
        None => match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(source) => Err(HostError::File { path: path.to_path_buf(), source }),
        },
    }
}

/// The regular files of `dir` that `select` gives a key for (from the file name), with their
/// text, sorted by key; none when the directory does not exist. Symlinks are skipped: an
/// operator's masks and `enable` links are not files routerd wrote.
///
/// Errors: [`HostError::File`].
pub(crate) fn read_dir_files(
    dir: &Path,
    select: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, HostError> {
    let file_err = |source| HostError::File { path: dir.to_path_buf(), source };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(file_err(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(file_err)?;
        let Some(key) = entry.file_name().to_str().and_then(&select) else { continue };
        if !entry.file_type().map_err(file_err)?.is_file() {
            continue;
        }
        let path = entry.path();
        let text = std::fs::read_to_string(&path)
            .map_err(|source| HostError::File { path: path.clone(), source })?;
        out.push((key, text));
    }
    out.sort();
    Ok(out)
}

/// The marker lines of a file made of named blocks, each owned by one artifact:
///
/// ```text
/// {begin}NAME
/// line
/// {end}
/// ```
pub struct Markers {
    /// The line prefix that opens a block; the block's name follows it.
    pub begin: &'static str,
    /// The line that closes a block.
    pub end: &'static str,
}

impl Markers {
    /// The blocks of `text`, in file order. Lines outside blocks belong to none; a block cut
    /// short (a file truncated by hand) is still listed, so it is repaired.
    pub fn parse(&self, text: &str) -> Vec<(String, Vec<String>)> {
        let mut out = Vec::new();
        let mut current: Option<(String, Vec<String>)> = None;
        for line in text.lines() {
            if let Some(name) = line.strip_prefix(self.begin) {
                out.extend(current.take());
                current = Some((name.trim().to_string(), Vec::new()));
            } else if line == self.end {
                out.extend(current.take());
            } else if let Some((_, l)) = current.as_mut() {
                l.push(line.to_string());
            }
        }
        out.extend(current);
        out
    }

    /// Appends the block `name` with `lines` to `out`, after a blank line.
    pub fn push(&self, out: &mut String, name: &str, lines: &[String]) {
        out.push('\n');
        self.push_tight(out, name, lines);
    }

    /// Appends the block `name` with `lines` to `out`, right after what is there.
    pub fn push_tight(&self, out: &mut String, name: &str, lines: &[String]) {
        out.push_str(self.begin);
        out.push_str(name);
        out.push('\n');
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
        out.push_str(self.end);
        out.push('\n');
    }

    /// Whether `line` can sit inside a block: a line break or a marker would smuggle content
    /// past the block's end.
    pub fn fits(&self, line: &str) -> bool {
        !line.contains('\n') && !line.starts_with(self.begin) && line != self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_creates_the_directory_and_sets_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a/b/secret");
        write_atomically(&path, b"x", 0o600).expect("writes");
        assert_eq!(std::fs::read(&path).expect("reads"), b"x");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(!dir.path().join("a/b/.secret.routerd-tmp").exists());
    }

    #[test]
    fn the_mode_holds_under_a_restrictive_umask() {
        use nix::sys::stat::{Mode, umask};
        use std::os::unix::fs::PermissionsExt;
        // routerd.service's UMask=0077 (nextest runs each test in a process of its own).
        umask(Mode::from_bits_truncate(0o077));
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("10-routerd-wan0.network");
        write_atomically(&path, b"[Match]\n", 0o644).expect("writes");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "readable by a daemon that dropped privileges");
    }
}
