//! The control API: HTTP+JSON on a Unix socket (default `/run/routerd/control.sock`, mode
//! 0600 in a 0700 directory). Endpoints and shapes are in `docs/control-api.md`; `routerctl`
//! and the web UI's JSON endpoints use these handlers.
//!
//! Handlers never touch the engine: they read the daemon's latest snapshot (a `watch`
//! receiver) and send triggers to the reconcile loop.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use routerd_engine::ResultDocument;
use routerd_model::status::DaemonStatus;
use serde::Serialize;
use tokio::net::UnixListener;
use tokio::sync::{mpsc, watch};

use crate::daemon::Trigger;

/// Default path of the control socket.
pub const DEFAULT_SOCKET: &str = "/run/routerd/control.sock";

/// What the reconcile loop publishes after each reconcile.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The status document.
    pub status: DaemonStatus,
    /// The last Result document, `None` before the first reconcile finished.
    pub result: Option<Arc<ResultDocument>>,
}

/// Shared by every handler.
#[derive(Clone)]
struct ControlState {
    snapshot: watch::Receiver<Snapshot>,
    triggers: mpsc::Sender<Trigger>,
}

/// An error body: `{"error": "..."}`.
#[derive(Serialize)]
struct ErrorBody {
    error: String,
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(ErrorBody { error: message.to_string() })).into_response()
}

/// The router of the control API.
pub fn router(snapshot: watch::Receiver<Snapshot>, triggers: mpsc::Sender<Trigger>) -> Router {
    Router::new()
        .route("/v1/status", get(status))
        .route("/v1/result", get(result))
        .route("/v1/reconcile", post(reconcile))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such endpoint") })
        .with_state(ControlState { snapshot, triggers })
}

async fn status(State(state): State<ControlState>) -> Json<DaemonStatus> {
    Json(state.snapshot.borrow().status.clone())
}

async fn result(State(state): State<ControlState>) -> Response {
    let result = state.snapshot.borrow().result.clone();
    match result {
        Some(doc) => Json(doc).into_response(),
        None => error(StatusCode::NOT_FOUND, "no reconcile has finished yet"),
    }
}

/// Asks for a reconcile now; 202 once queued (a queued one already covers this request).
async fn reconcile(State(state): State<ControlState>) -> Response {
    match state.triggers.try_send(Trigger::Api) {
        Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => {
            (StatusCode::ACCEPTED, Json(serde_json::json!({"accepted": true}))).into_response()
        }
        Err(mpsc::error::TrySendError::Closed(_)) => {
            error(StatusCode::SERVICE_UNAVAILABLE, "the daemon is stopping")
        }
    }
}

/// A bound control socket; the file is removed on drop.
pub struct ControlSocket {
    listener: Option<UnixListener>,
    path: PathBuf,
}

impl ControlSocket {
    /// Binds `path`: creates its directory (0700) if missing, replaces a stale socket file
    /// (one nobody answers on), and makes the socket 0600.
    ///
    /// Errors: another daemon answers on `path` (`AddrInUse`), or the directory, file or bind
    /// fails.
    pub fn bind(path: &Path) -> io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.exists()
        {
            std::fs::create_dir_all(dir)?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        if path.exists() {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("another routerd answers on {}", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
        }
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        Ok(Self { listener: Some(listener), path: path.to_path_buf() })
    }

    /// Serves `router` until the process stops.
    pub async fn serve(mut self, router: Router) -> io::Result<()> {
        let listener = self.listener.take().ok_or_else(|| io::Error::other("already served"))?;
        axum::serve(listener, router).await
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
