//! The daemon's request side: the control socket and the web UI, served on a thread of their
//! own (`http`) with its own runtime. The reconcile loop's parses, plans and reconciles run on
//! the main thread, so none of them delays an answer: one 0.28 s plan once delayed a GET of the
//! overview by 222 ms, since both shared one single-threaded runtime (issue 33 §3).
//!
//! ```text
//!   main thread (runtime 1)                       http thread (runtime 2)
//!   reconcile loop ── watch<Snapshot> ──────────▶ control socket, web UI: read snapshots
//!         ▲                                              │
//!         └──────────────── mpsc<Msg> ◀──────────────────┘ apply, plan, confirm, …
//! ```
//!
//! Handlers that need the engine send the loop a message and wait for its answer without
//! blocking their thread; CPU work of their own (validating the editor's text) goes to the
//! blocking pool.

use std::thread::JoinHandle;

use anyhow::Context;
use axum::Router;
use tokio::sync::oneshot;

use crate::control::ControlSocket;
use crate::web::WebOptions;

/// The running servers; [`Servers::stop`] ends them.
pub struct Servers {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Servers {
    /// Starts the thread, serves `control` on `socket` and, with `web`, the web UI, and returns
    /// once both listen.
    ///
    /// Errors: the thread or its runtime cannot start, the web UI cannot bind its address or
    /// make its certificate.
    pub fn start(
        socket: ControlSocket,
        control: Router,
        web: Option<WebOptions>,
    ) -> anyhow::Result<Self> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<anyhow::Result<()>>();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("http".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                let runtime = match runtime {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = ready_tx.send(Err(anyhow::Error::from(e).context("runtime")));
                        return;
                    }
                };
                runtime.block_on(serve(socket, control, web, ready_tx, stopped));
            })
            .context("starting the http thread")?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Self { stop: Some(stop), thread: Some(thread) }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(anyhow::anyhow!("the http thread ended before it served")),
        }
    }

    /// Stops serving and waits for the thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The http thread's work: bind the web UI, serve both until `stopped`.
async fn serve(
    socket: ControlSocket,
    control: Router,
    web: Option<WebOptions>,
    ready: std::sync::mpsc::Sender<anyhow::Result<()>>,
    stopped: oneshot::Receiver<()>,
) {
    let web = match web {
        Some(options) => match crate::web::bind(options).await {
            Ok(task) => Some(task),
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        },
        None => None,
    };
    let control = tokio::spawn(async move {
        if let Err(e) = socket.serve(control).await {
            tracing::error!("control socket: {e}");
        }
    });
    let _ = ready.send(Ok(()));
    let _ = stopped.await;
    control.abort();
    let _ = control.await;
    if let Some(web) = web {
        web.abort();
        let _ = web.await;
    }
}
