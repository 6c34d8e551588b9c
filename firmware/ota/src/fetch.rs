//! Downloading a bundle over HTTP or HTTPS into a file, for "install from a URL" (the web UI's
//! OTA page): a GET that follows up to [`MAX_REDIRECTS`] redirects and stops at a byte limit.
//!
//! HTTPS trusts Mozilla's root store as `webpki-roots` ships it (the router's rootfs has no CA
//! bundle of its own and no clock-independent way to update one). Plain HTTP is allowed: a
//! bundle's integrity and origin come from its signature, which RAUC checks against the
//! keyring before anything is installed; TLS adds only confidentiality. hyper
//! (RFC 9112) carries the request; nothing here parses HTTP itself.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// Redirects followed before giving up (release hosting commonly redirects once or twice).
pub const MAX_REDIRECTS: usize = 5;

/// How long connecting, the TLS handshake and the response head may take, each.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// How long the body may go without a byte before the download is abandoned.
const STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a download failed. `Display` is a sentence for the operator.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Not an absolute `http://` or `https://` URL with a host.
    #[error("{url:?} is not an http:// or https:// URL: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The host resolves to an address the caller's policy refuses (the router itself).
    #[error("refusing to download from {host} ({address}): {reason}")]
    Refused {
        /// `host:port`.
        host: String,
        /// The refused address.
        address: std::net::IpAddr,
        /// Why, from the policy.
        reason: String,
    },
    /// DNS resolution, TCP connect or the TLS handshake failed or timed out.
    #[error("cannot connect to {host}: {reason}")]
    Connect {
        /// `host:port`.
        host: String,
        /// What failed.
        reason: String,
    },
    /// The HTTP exchange failed (hyper's error) or stalled.
    #[error("downloading {url}: {reason}")]
    Http {
        /// The URL being fetched.
        url: String,
        /// What failed.
        reason: String,
    },
    /// The server answered with something other than 200 (after redirects).
    #[error("{url} answered {status}")]
    Status {
        /// The URL that answered.
        url: String,
        /// Its status code and reason phrase (`404 Not Found`).
        status: String,
    },
    /// More than [`MAX_REDIRECTS`] redirects, or a redirect without a usable `Location`.
    #[error("{url}: {reason}")]
    Redirect {
        /// The URL that redirected.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The body is (or announced to be) longer than the limit.
    #[error("the bundle is larger than the {limit} bytes there is room for")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// Writing the file failed.
    #[error("writing {}: {source}", path.display())]
    Io {
        /// The file written.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// A finished download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    /// The URL the body came from, after redirects.
    pub url: String,
    /// Bytes written.
    pub bytes: u64,
}

/// Which addresses a download may connect to: `Err(reason)` refuses one.
pub type Destinations = dyn Fn(std::net::IpAddr) -> Result<(), String> + Sync;

/// Downloads `url` into `dest` (created or truncated), at most `limit` bytes, connecting only
/// where `allowed` agrees: every address the host of the URL (and of each redirect) resolves to
/// is checked, and the connection goes to those checked addresses, not to a second lookup.
///
/// The body is written to `dest` as it arrives; on any error the partial file is removed.
/// Errors: [`FetchError`]; a `Content-Length` over `limit` fails before a byte is written.
pub async fn download(
    url: &str,
    dest: &Path,
    limit: u64,
    allowed: &Destinations,
) -> Result<Downloaded, FetchError> {
    let mut current = parse(url)?;
    for _ in 0..=MAX_REDIRECTS {
        let response = get(&current, allowed).await?;
        let status = response.status();
        if status.is_redirection() {
            current = redirect_target(&current, response.headers())?;
            continue;
        }
        if status != hyper::StatusCode::OK {
            return Err(FetchError::Status {
                url: current.to_string(),
                status: status.to_string(),
            });
        }
        let announced = response
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if announced.is_some_and(|n| n > limit) {
            return Err(FetchError::TooLarge { limit });
        }
        let written = write_body(response.into_body(), &current, dest, limit).await;
        if written.is_err() {
            let _ = std::fs::remove_file(dest);
        }
        return written.map(|bytes| Downloaded { url: current.to_string(), bytes });
    }
    Err(FetchError::Redirect {
        url: current.to_string(),
        reason: format!("more than {MAX_REDIRECTS} redirects"),
    })
}

fn parse(url: &str) -> Result<url::Url, FetchError> {
    let bad = |reason: String| FetchError::BadUrl { url: url.to_string(), reason };
    let parsed = url::Url::parse(url.trim()).map_err(|e| bad(e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(bad(format!("scheme {:?}", parsed.scheme())));
    }
    if parsed.host().is_none() {
        return Err(bad("no host".into()));
    }
    Ok(parsed)
}

/// Where a 3xx points: `Location` resolved against the URL that answered (RFC 9110 §10.2.2).
fn redirect_target(from: &url::Url, headers: &hyper::HeaderMap) -> Result<url::Url, FetchError> {
    let bad = |reason: String| FetchError::Redirect { url: from.to_string(), reason };
    let location = headers
        .get(hyper::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| bad("a redirect without a Location".into()))?;
    let target = from.join(location).map_err(|e| bad(format!("Location {location:?}: {e}")))?;
    parse(target.as_str())
}

/// One GET on a fresh connection; the response's body is still to be read.
async fn get(
    url: &url::Url,
    allowed: &Destinations,
) -> Result<hyper::Response<hyper::body::Incoming>, FetchError> {
    let host = url.host_str().unwrap_or_default().to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let authority = format!("{host}:{port}");
    let connect_error = |reason: String| FetchError::Connect { host: authority.clone(), reason };
    // `host_str` keeps an IPv6 literal's brackets; the socket and TLS want it bare.
    let bare = host.trim_start_matches('[').trim_end_matches(']').to_string();
    let resolve = tokio::net::lookup_host((bare.as_str(), port));
    let addresses: Vec<std::net::SocketAddr> = tokio::time::timeout(CONNECT_TIMEOUT, resolve)
        .await
        .map_err(|_| connect_error(format!("no address within {CONNECT_TIMEOUT:?}")))?
        .map_err(|e| connect_error(e.to_string()))?
        .collect();
    for address in &addresses {
        allowed(address.ip()).map_err(|reason| FetchError::Refused {
            host: authority.clone(),
            address: address.ip(),
            reason,
        })?;
    }
    let tcp = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addresses.as_slice()))
        .await
        .map_err(|_| connect_error(format!("no connection within {CONNECT_TIMEOUT:?}")))?
        .map_err(|e| connect_error(e.to_string()))?;
    let mut path = url.path().to_string();
    if let Some(query) = url.query() {
        path.push('?');
        path.push_str(query);
    }
    let host_header = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.clone(),
    };
    let request = hyper::Request::get(path)
        .header(hyper::header::HOST, host_header)
        .header(hyper::header::USER_AGENT, concat!("routerd/", env!("CARGO_PKG_VERSION")))
        .body(Empty::<Bytes>::new())
        .map_err(|e| FetchError::BadUrl { url: url.to_string(), reason: e.to_string() })?;
    if url.scheme() == "https" {
        let name = rustls::pki_types::ServerName::try_from(bare)
            .map_err(|e| connect_error(format!("server name: {e}")))?;
        let tls = tokio::time::timeout(CONNECT_TIMEOUT, tls_connector()?.connect(name, tcp))
            .await
            .map_err(|_| connect_error(format!("no TLS handshake within {CONNECT_TIMEOUT:?}")))?
            .map_err(|e| connect_error(format!("TLS: {e}")))?;
        exchange(url, tls, request).await
    } else {
        exchange(url, tcp, request).await
    }
}

async fn exchange<S>(
    url: &url::Url,
    stream: S,
    request: hyper::Request<Empty<Bytes>>,
) -> Result<hyper::Response<hyper::body::Incoming>, FetchError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let http = |e: String| FetchError::Http { url: url.to_string(), reason: e };
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| http(e.to_string()))?;
    tokio::spawn(connection);
    tokio::time::timeout(CONNECT_TIMEOUT, sender.send_request(request))
        .await
        .map_err(|_| http(format!("no answer within {CONNECT_TIMEOUT:?}")))?
        .map_err(|e| http(e.to_string()))
}

/// A TLS client trusting Mozilla's roots (`webpki-roots`), with *ring* as the provider.
fn tls_connector() -> Result<tokio_rustls::TlsConnector, FetchError> {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| FetchError::Connect { host: String::new(), reason: e.to_string() })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

async fn write_body(
    mut body: hyper::body::Incoming,
    url: &url::Url,
    dest: &Path,
    limit: u64,
) -> Result<u64, FetchError> {
    let io = |source| FetchError::Io { path: dest.to_path_buf(), source };
    let mut file = std::fs::File::create(dest).map_err(io)?;
    let mut written: u64 = 0;
    loop {
        let frame = tokio::time::timeout(STALL_TIMEOUT, body.frame()).await.map_err(|_| {
            FetchError::Http {
                url: url.to_string(),
                reason: format!("no data for {STALL_TIMEOUT:?}"),
            }
        })?;
        let Some(frame) = frame else { break };
        let frame =
            frame.map_err(|e| FetchError::Http { url: url.to_string(), reason: e.to_string() })?;
        let Ok(data) = frame.into_data() else { continue };
        written += data.len() as u64;
        if written > limit {
            return Err(FetchError::TooLarge { limit });
        }
        file.write_all(&data).map_err(io)?;
    }
    file.sync_all().map_err(io)?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absolute_http_urls_with_a_host_are_accepted() {
        assert!(parse("https://updates.example.net/r.raucb").is_ok());
        assert!(parse(" http://[2001:db8::1]:8080/r.raucb ").is_ok());
        for bad in ["ftp://h/r.raucb", "file:///tmp/r.raucb", "/tmp/r.raucb", "http://"] {
            assert!(matches!(parse(bad), Err(FetchError::BadUrl { .. })), "{bad}");
        }
    }

    #[test]
    fn a_relative_location_resolves_against_the_redirecting_url() {
        let from = parse("https://h.example/releases/latest").expect("url");
        let mut headers = hyper::HeaderMap::new();
        headers.insert(hyper::header::LOCATION, "../files/r-1.2.raucb".parse().expect("value"));
        let to = redirect_target(&from, &headers).expect("target");
        assert_eq!(to.as_str(), "https://h.example/files/r-1.2.raucb");
        headers.insert(hyper::header::LOCATION, "ftp://h.example/r".parse().expect("value"));
        assert!(redirect_target(&from, &headers).is_err());
        assert!(redirect_target(&from, &hyper::HeaderMap::new()).is_err());
    }
}
