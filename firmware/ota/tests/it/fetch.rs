//! `routerd_ota::fetch::download` against a small HTTP/1.1 server on loopback
//! ([`serve_http`], answering each path as `scripted` says): redirects followed, refusals and
//! limits reported, and no partial file left behind.

use std::io::Read;

use routerd_ota::fetch::{FetchError, MAX_REDIRECTS, download};
use routerd_ota::testing::{http_response as response, serve_http};

fn body() -> Vec<u8> {
    (0..200_000u32).map(|i| (i % 253) as u8).collect()
}

fn scripted(path: &str) -> Vec<u8> {
    match path {
        "/bundle.raucb" => response("200 OK", "", &body()),
        "/latest" => response("302 Found", "Location: releases/v2\r\n", b""),
        "/releases/v2" => response("301 Moved Permanently", "Location: /bundle.raucb\r\n", b""),
        "/loop" => response("302 Found", "Location: /loop\r\n", b""),
        "/elsewhere" => response("302 Found", "Location: http://[::1]:1/bundle.raucb\r\n", b""),
        "/chunked" => {
            // No Content-Length: the limit must hold while the body streams.
            let mut out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            for _ in 0..4 {
                out.extend_from_slice(format!("{:x}\r\n", 50_000).as_bytes());
                out.extend_from_slice(&[7u8; 50_000]);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
            out
        }
        _ => response("404 Not Found", "", b"no such bundle"),
    }
}

#[tokio::test]
async fn a_download_follows_redirects_and_writes_the_body_byte_for_byte() {
    let base = serve_http(scripted);
    let dir = tempfile::tempdir().expect("tempdir");
    let dest = dir.path().join("staged.raucb");
    let done =
        download(&format!("{base}/latest"), &dest, 1 << 20, &|_| Ok(())).await.expect("downloaded");
    assert_eq!(done.url, format!("{base}/bundle.raucb"), "two redirects, one relative");
    assert_eq!(done.bytes, 200_000);
    let mut written = Vec::new();
    std::fs::File::open(&dest).expect("file").read_to_end(&mut written).expect("read");
    assert!(written == body(), "the body arrives byte for byte");
}

#[tokio::test]
async fn refusals_and_limits_are_reported_and_leave_no_file() {
    let base = serve_http(scripted);
    let dir = tempfile::tempdir().expect("tempdir");
    let dest = dir.path().join("staged.raucb");

    let missing = download(&format!("{base}/nope"), &dest, 1 << 20, &|_| Ok(())).await;
    assert!(
        matches!(&missing, Err(FetchError::Status { status, .. }) if status == "404 Not Found"),
        "{missing:?}"
    );
    let looping = download(&format!("{base}/loop"), &dest, 1 << 20, &|_| Ok(())).await;
    let Err(FetchError::Redirect { reason, .. }) = looping else { panic!("{looping:?}") };
    assert!(reason.contains(&format!("more than {MAX_REDIRECTS}")), "{reason}");

    // Announced too large: refused before a byte is written.
    let announced = download(&format!("{base}/bundle.raucb"), &dest, 100_000, &|_| Ok(())).await;
    assert!(matches!(announced, Err(FetchError::TooLarge { limit: 100_000 })), "{announced:?}");
    assert!(!dest.exists());
    // Too large as it streams: stopped, and the partial file removed.
    let streamed = download(&format!("{base}/chunked"), &dest, 120_000, &|_| Ok(())).await;
    assert!(matches!(streamed, Err(FetchError::TooLarge { limit: 120_000 })), "{streamed:?}");
    assert!(!dest.exists(), "no partial bundle left");

    let refused = download("http://127.0.0.1:1/bundle.raucb", &dest, 1 << 20, &|_| Ok(())).await;
    assert!(matches!(refused, Err(FetchError::Connect { .. })), "{refused:?}");
    let ftp = download("ftp://127.0.0.1/bundle.raucb", &dest, 1 << 20, &|_| Ok(())).await;
    assert!(matches!(ftp, Err(FetchError::BadUrl { .. })), "{ftp:?}");
}

#[tokio::test]
async fn an_address_the_policy_refuses_is_never_connected_to_not_even_after_a_redirect() {
    let base = serve_http(scripted);
    let dir = tempfile::tempdir().expect("tempdir");
    let dest = dir.path().join("staged.raucb");
    let no_v4 = |ip: std::net::IpAddr| if ip.is_ipv4() { Err("ipv4".to_string()) } else { Ok(()) };
    let refused = download(&format!("{base}/bundle.raucb"), &dest, 1 << 20, &no_v4).await;
    assert!(
        matches!(&refused, Err(FetchError::Refused { address, .. }) if address.is_loopback()),
        "{refused:?}"
    );
    let no_v6 = |ip: std::net::IpAddr| if ip.is_ipv6() { Err("ipv6".to_string()) } else { Ok(()) };
    let redirected = download(&format!("{base}/elsewhere"), &dest, 1 << 20, &no_v6).await;
    let message = redirected.as_ref().map_err(ToString::to_string).expect_err("refused");
    assert!(message.contains("refusing to download from [::1]:1 (::1): ipv6"), "{message}");
    assert!(!dest.exists(), "nothing written");
}
