//! A background task that follows the applied config: restarted when the config's text
//! changes, aborted when its owner is dropped. The StatePolicy and AFTR schedulers each run
//! one.

use std::future::Future;

use tokio::task::AbortHandle;

/// The task, and the digest of the config it follows.
#[derive(Default)]
pub struct ConfigTask {
    task: Option<AbortHandle>,
    synced: Option<String>,
}

impl ConfigTask {
    /// Whether the config with text digest `digest` is another than the one last followed. If
    /// so, the running task is aborted and `digest` becomes the one followed; the caller then
    /// [`spawn`](Self::spawn)s the task for it (or none, when the config asks for nothing).
    pub fn resync(&mut self, digest: &str) -> bool {
        if self.synced.as_deref() == Some(digest) {
            return false;
        }
        self.synced = Some(digest.to_string());
        if let Some(task) = self.task.take() {
            task.abort();
        }
        true
    }

    /// Runs `task` as the one following the current config.
    pub fn spawn(&mut self, task: impl Future<Output = ()> + Send + 'static) {
        if let Some(old) = self.task.replace(tokio::spawn(task).abort_handle()) {
            old.abort();
        }
    }
}

impl Drop for ConfigTask {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
