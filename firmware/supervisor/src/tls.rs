//! TLS for the web UI on a non-loopback listener: a self-signed certificate made on first
//! start (rcgen, ECDSA P-256), kept in the state directory, served with rustls.
//!
//! ```text
//! STATE_DIR/tls/          0700
//!   cert.pem              the certificate (PEM)
//!   key.pem               its private key (PKCS#8 PEM), 0600
//! ```
//!
//! The certificate is valid from 1975 to 4096 (rcgen's defaults) on purpose: a router often
//! boots with its clock at 1970 until NTP answers, and the operator must still reach the UI.
//! It is self-signed, so a browser warns on first visit; the SHA-256 fingerprint is logged at
//! every start so the operator can compare it with what the browser shows. Replacing the two
//! files (with a certificate from the operator's CA) and restarting serves that instead.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::{Digest, Sha256};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// A handshake that takes longer than this is dropped (a client that connects and says
/// nothing must not hold a task forever).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the certificate could not be loaded or made.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Reading or writing a file.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A PEM file that does not hold what it should.
    #[error("{path}: {message}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Generating the certificate.
    #[error("generating the certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// rustls refused the certificate and key (they do not match, or the key type).
    #[error("the certificate and key in {dir}: {source}")]
    Rustls {
        /// The tls directory.
        dir: PathBuf,
        /// rustls's reason.
        source: rustls::Error,
    },
}

/// The server's certificate and key, ready to serve.
pub struct Identity {
    /// The rustls server configuration (HTTP/1.1 by ALPN).
    pub config: Arc<rustls::ServerConfig>,
    /// SHA-256 of the certificate's DER, as colon-separated upper-case hex (what browsers show).
    pub fingerprint: String,
    /// Whether this start generated it.
    pub created: bool,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TlsError + '_ {
    move |source| TlsError::Io { path: path.to_path_buf(), source }
}

/// The names the certificate is made for: `localhost`, the host name, `127.0.0.1`, `::1`
/// and the listen address when it is a specific one.
fn subject_alt_names(listen: IpAddr) -> Vec<String> {
    let mut names = vec!["localhost".to_string()];
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        let host = host.trim();
        if !host.is_empty() && host != "localhost" {
            names.push(host.to_string());
        }
    }
    names.push("127.0.0.1".into());
    names.push("::1".into());
    if !listen.is_unspecified() && !listen.is_loopback() {
        names.push(listen.to_string());
    }
    names
}

/// Writes `data` to `path` through a temporary file in the same directory (so a crash never
/// leaves half a key), with `mode`.
fn write_atomically(path: &Path, data: &[u8], mode: u32) -> Result<(), TlsError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(io(dir))?;
    file.as_file().set_permissions(std::fs::Permissions::from_mode(mode)).map_err(io(path))?;
    file.write_all(data).map_err(io(path))?;
    file.as_file().sync_all().map_err(io(path))?;
    file.persist(path).map_err(|e| TlsError::Io { path: path.to_path_buf(), source: e.error })?;
    Ok(())
}

/// Loads `STATE_DIR/tls/{cert,key}.pem`, or makes them when neither exists.
///
/// Errors: unreadable or malformed files, one of the two missing (never overwritten: the
/// operator may have put a certificate there), a key that does not match the certificate.
pub fn load_or_create(state_dir: &Path, listen: IpAddr) -> Result<Identity, TlsError> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = state_dir.join("tls");
    let cert_path = dir.join("cert.pem");
    let key_path = dir.join("key.pem");
    let created = !cert_path.exists() && !key_path.exists();
    if created {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).map_err(io(&dir))?;
        let made = rcgen::generate_simple_self_signed(subject_alt_names(listen))?;
        write_atomically(&key_path, made.signing_key.serialize_pem().as_bytes(), 0o600)?;
        write_atomically(&cert_path, made.cert.pem().as_bytes(), 0o644)?;
    }
    let pem = |path: &Path| std::fs::read(path).map_err(io(path));
    let cert_pem = pem(&cert_path)?;
    let key_pem = pem(&key_path)?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| TlsError::Pem { path: cert_path.clone(), message: e.to_string() })?;
    let Some(leaf) = chain.first() else {
        return Err(TlsError::Pem { path: cert_path, message: "no CERTIFICATE block".into() });
    };
    let fingerprint = Sha256::digest(leaf.as_ref())
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":");
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| TlsError::Pem { path: key_path, message: e.to_string() })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(chain, key))
        .map_err(|source| TlsError::Rustls { dir: dir.clone(), source })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Identity { config: Arc::new(config), fingerprint, created })
}

/// A TLS listener for `axum::serve`: TCP connections are accepted and their handshakes run
/// in tasks of their own (one slow client does not hold up the others); finished handshakes
/// come out of [`accept`](axum::serve::Listener::accept).
pub struct TlsListener {
    local: SocketAddr,
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
}

impl TlsListener {
    /// Serves handshakes on `listener` with `config`.
    pub fn new(listener: TcpListener, config: Arc<rustls::ServerConfig>) -> std::io::Result<Self> {
        let local = listener.local_addr()?;
        let (tx, ready) = mpsc::channel(16);
        let acceptor = TlsAcceptor::from(config);
        tokio::spawn(async move {
            loop {
                let (tcp, peer) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // EMFILE and friends: back off rather than spin.
                        tracing::warn!("web UI: accept: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                if tx.is_closed() {
                    break;
                }
                let acceptor = acceptor.clone();
                let ready = tx.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(tls)) => {
                            let _ = ready.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!("web UI: TLS handshake from {peer}: {e}"),
                        Err(_) => tracing::debug!("web UI: TLS handshake from {peer} timed out"),
                    }
                });
            }
        });
        Ok(Self { local, ready })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(accepted) => accepted,
            // The accept task only ends when this receiver is gone; never ready again.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_is_made_once_with_a_private_key_and_then_reused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = load_or_create(dir.path(), IpAddr::from([192, 168, 1, 1])).expect("made");
        assert!(first.created);
        assert_eq!(first.fingerprint.len(), 32 * 3 - 1, "{}", first.fingerprint);
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &str| {
            std::fs::metadata(dir.path().join(p)).expect("exists").permissions().mode() & 0o777
        };
        assert_eq!(mode("tls"), 0o700);
        assert_eq!(mode("tls/key.pem"), 0o600);
        let again = load_or_create(dir.path(), IpAddr::from([192, 168, 1, 1])).expect("loaded");
        assert!(!again.created);
        assert_eq!(again.fingerprint, first.fingerprint);
        let cert = std::fs::read_to_string(dir.path().join("tls/cert.pem")).expect("cert");
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"));
    }

    #[test]
    fn a_lone_certificate_is_refused_not_overwritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        load_or_create(dir.path(), IpAddr::from([0, 0, 0, 0])).expect("made");
        std::fs::remove_file(dir.path().join("tls/key.pem")).expect("rm");
        let before = std::fs::read(dir.path().join("tls/cert.pem")).expect("cert");
        let err = load_or_create(dir.path(), IpAddr::from([0, 0, 0, 0])).err().expect("refused");
        assert!(err.to_string().contains("key.pem"), "{err}");
        assert_eq!(std::fs::read(dir.path().join("tls/cert.pem")).expect("cert"), before);
    }

    #[test]
    fn names_cover_loopback_and_a_specific_listen_address() {
        let names = subject_alt_names(IpAddr::from([10, 0, 0, 1]));
        for n in ["localhost", "127.0.0.1", "::1", "10.0.0.1"] {
            assert!(names.iter().any(|x| x == n), "{n} in {names:?}");
        }
        assert!(!subject_alt_names(IpAddr::from([0, 0, 0, 0])).iter().any(|x| x == "0.0.0.0"));
    }
}
