//! Files of the file-based configurators (units, dnsmasq).

use std::io::ErrorKind;
use std::path::Path;

use crate::error::HostError;

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader (systemd, a daemon) never sees half a file. Creates the directory.
///
/// Errors: [`HostError::File`].
pub(crate) fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> Result<(), HostError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
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
    f.write_all(bytes).and_then(|()| f.sync_all()).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
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
}
