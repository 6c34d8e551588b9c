//! The HTTP client over the daemon's control socket (`docs/control-api.md`): one request per
//! connection, error answers turned into [`Failure`]s, and the OTA install's line stream.

use std::path::Path;

use anyhow::Context;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;

use crate::Failure;

/// The daemon's JSON answer `body` as a value.
pub(crate) fn parse(body: &str) -> Result<serde_json::Value, Failure> {
    serde_json::from_str(body).map_err(|e| Failure::Answered(format!("unexpected answer: {e}")))
}

/// One request (with a JSON body when given); the body of a 2xx answer as text.
pub(crate) async fn call(
    socket: &Path,
    method: Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> Result<String, Failure> {
    call_about(socket, method, path, body, None).await
}

/// [`call`] of a request carrying the text of `file` (`apply -f`, `plan -f`): the config errors
/// of a refusal name `file` as the operator gave it, not the daemon's name for the text
/// (`apply`, `plan`), so an editor can jump to them (issue 34 §8).
pub(crate) async fn call_about(
    socket: &Path,
    method: Method,
    path: &str,
    body: Option<serde_json::Value>,
    file: Option<&Path>,
) -> Result<String, Failure> {
    let response = send(socket, method, path, body).await?;
    let status = response.status();
    let text = read_all(response).await?;
    if status.is_success() { Ok(text) } else { Err(answered_error_about(status, text, file)) }
}

/// Sends one request on the control socket; the response's body is still to be read.
async fn send(
    socket: &Path,
    method: Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> Result<hyper::Response<hyper::body::Incoming>, Failure> {
    let stream = UnixStream::connect(socket)
        .await
        .with_context(|| format!("cannot reach routerd on {}", socket.display()))
        .map_err(Failure::Unreachable)?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .context("HTTP handshake on the control socket")
        .map_err(Failure::Unreachable)?;
    tokio::spawn(connection);
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "routerd")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| Failure::Answered(format!("building the request: {e}")))?;
    sender
        .send_request(request)
        .await
        .context("control socket request")
        .map_err(Failure::Unreachable)
}

/// The whole body of `response` as text.
async fn read_all(response: hyper::Response<hyper::body::Incoming>) -> Result<String, Failure> {
    let bytes = response
        .into_body()
        .collect()
        .await
        .context("reading the answer")
        .map_err(Failure::Unreachable)?
        .to_bytes();
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The daemon's error answer as a failure: its `error` message, and config errors one per
/// line as `routerd validate` prints them.
pub(crate) fn answered_error(status: StatusCode, text: String) -> Failure {
    answered_error_about(status, text, None)
}

/// [`answered_error`], the config errors naming `file` when given (see [`call_about`]).
pub(crate) fn answered_error_about(
    status: StatusCode,
    text: String,
    file: Option<&Path>,
) -> Failure {
    let answer = serde_json::from_str::<serde_json::Value>(&text).ok();
    let mut message = answer
        .as_ref()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or(text);
    let file = file.map(|f| f.display().to_string());
    for e in answer.iter().flat_map(|v| v["errors"].as_array().into_iter().flatten()) {
        message.push('\n');
        message.push_str(&config_error_line(e, file.as_deref()));
    }
    Failure::Answered(format!("{} {message}", status_text(status)))
}

/// One config error of a 422 answer (`docs/control-api.md`) as `routerd validate` prints it:
/// `FILE:LINE:COLUMN: RESOURCE: PATH: MESSAGE` (`FILE: ` alone when it has no position, the
/// resource and path parts only when given), with `file` instead of the daemon's name.
fn config_error_line(e: &serde_json::Value, file: Option<&str>) -> String {
    let file = file.or(e["file"].as_str()).unwrap_or("");
    let mut line = match (e["line"].as_u64().unwrap_or(0), e["column"].as_u64().unwrap_or(0)) {
        (0, _) => format!("{file}: "),
        (l, c) => format!("{file}:{l}:{c}: "),
    };
    for part in [e["resource"].as_str(), e["path"].as_str()].into_iter().flatten() {
        if !part.is_empty() {
            line.push_str(part);
            line.push_str(": ");
        }
    }
    line.push_str(e["message"].as_str().unwrap_or(""));
    line
}

/// `POST /v1/ota/install` with its newline-delimited JSON answer: each line is handed to
/// `on_line` as it arrives. Returns the last line (the `completed` event).
pub(crate) async fn stream_lines(
    socket: &Path,
    path: &str,
    body: serde_json::Value,
    mut on_line: impl FnMut(&serde_json::Value),
) -> Result<serde_json::Value, Failure> {
    let response = send(socket, Method::POST, path, Some(body)).await?;
    let status = response.status();
    if !status.is_success() {
        return Err(answered_error(status, read_all(response).await?));
    }
    let mut body = response.into_body();
    let mut pending = Vec::new();
    let mut last = serde_json::Value::Null;
    while let Some(frame) = body.frame().await {
        let frame = frame.context("reading the answer").map_err(Failure::Unreachable)?;
        let Ok(data) = frame.into_data() else { continue };
        pending.extend_from_slice(&data);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let value: serde_json::Value = serde_json::from_slice(&line)
                .map_err(|e| Failure::Answered(format!("unexpected line from the daemon: {e}")))?;
            on_line(&value);
            last = value;
        }
    }
    Ok(last)
}

/// `status` as `422 Unprocessable Entity`.
fn status_text(status: StatusCode) -> String {
    format!("{} {}", status.as_u16(), status.canonical_reason().unwrap_or(""))
}
