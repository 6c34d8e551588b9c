//! Sessions, CSRF tokens and login rate limiting (in memory: a restart logs everyone out).
//!
//! - A session is a random 128-bit id in a cookie (`HttpOnly; SameSite=Strict`, plus `Secure`
//!   under TLS), valid for [`SESSION_TTL`] from login; each has its own CSRF token, which every
//!   state-changing form carries back.
//! - A login (or setup-token) attempt is counted as a failure *before* its password is hashed
//!   ([`LoginGate::reserve`]) and forgiven only when it succeeds: after [`MAX_FAILURES`] within
//!   [`FAILURE_WINDOW`] from one client address, or [`MAX_FAILURES_OVERALL`] from all of them,
//!   further attempts are refused (HTTP 429) until the window ends, without hashing.
//! - Hashing (argon2id, 19 MiB each) runs on one worker thread, one at a time, with at most
//!   [`HASH_QUEUE`] waiting ([`Hasher`]); more are refused as busy. Thirty parallel wrong logins
//!   once took the daemon from 61 to 587 MB, each hashing on its own blocking thread.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};
use cookie::{Cookie, SameSite, time};
use subtle::ConstantTimeEq;

/// The session cookie's name.
pub const COOKIE: &str = "routerd_session";
/// Clears the session cookie: the session cookie with an empty value and `Max-Age=0`, in the
/// `cookie` crate's attribute order (a constant for `HeaderValue::from_static`; a test checks it
/// against what the crate builds).
pub const CLEAR_COOKIE: &str = "routerd_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0";
/// How long a session lasts after login.
pub const SESSION_TTL: Duration = Duration::from_secs(8 * 3600);
/// Failed logins allowed per address within [`FAILURE_WINDOW`].
pub const MAX_FAILURES: u32 = 5;
/// Failed logins allowed from all addresses together within [`FAILURE_WINDOW`] (an attacker
/// with many addresses, such as an IPv6 prefix).
pub const MAX_FAILURES_OVERALL: u32 = 30;
/// The window failed logins are counted in.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(60);
/// Hashes that may wait for the [`Hasher`] while one runs.
pub const HASH_QUEUE: usize = 3;

/// A signed-in session.
#[derive(Clone, Debug)]
pub struct Session {
    /// The token its forms must carry.
    pub csrf: String,
    expires: Instant,
    /// The credentials' stamp at login ([`crate::Backend::credentials_stamp`]): the session
    /// ends when the password changes.
    stamp: String,
}

/// The live sessions.
#[derive(Default)]
pub struct Sessions(Mutex<HashMap<String, Session>>);

/// 128 random bits as hex.
fn random_id() -> String {
    let mut bytes = [0u8; 16];
    // Without randomness no session can be made safely: an empty id matches no cookie.
    if getrandom::fill(&mut bytes).is_err() {
        return String::new();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The session id in `headers`' cookies, if any: the first non-empty [`COOKIE`] of all `Cookie`
/// headers, taken as sent (not percent-decoded). Malformed pairs are skipped.
fn cookie_id(headers: &HeaderMap) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).find_map(|line| {
        Cookie::split_parse(line).filter_map(Result::ok).find_map(|cookie| {
            let (name, value) = cookie.name_value();
            (name == COOKIE && !value.is_empty()).then(|| value.to_string())
        })
    })
}

impl Sessions {
    /// A new session, made under the credentials `stamp`: its id and CSRF token.
    pub fn create(&self, stamp: String) -> (String, String) {
        let id = random_id();
        let csrf = random_id();
        let mut map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        map.retain(|_, s| s.expires > now);
        if !id.is_empty() {
            let session = Session { csrf: csrf.clone(), expires: now + SESSION_TTL, stamp };
            map.insert(id.clone(), session);
        }
        (id, csrf)
    }

    /// The live session `headers` carry, if it was made under the current credentials `stamp`
    /// (one made before a password change is gone).
    pub fn get(&self, headers: &HeaderMap, stamp: &str) -> Option<Session> {
        let id = cookie_id(headers)?;
        let mut map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let session = map.get(&id).filter(|s| s.expires > Instant::now()).cloned();
        if session.as_ref().is_some_and(|s| s.stamp != stamp) {
            map.remove(&id);
            return None;
        }
        session
    }

    /// Ends the session `headers` carry.
    pub fn remove(&self, headers: &HeaderMap) {
        if let Some(id) = cookie_id(headers) {
            self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&id);
        }
    }
}

/// The session cookie with `value`, living `max_age`: `Path=/; HttpOnly; SameSite=Strict`,
/// plus `Secure` when `secure`.
fn session_cookie(value: &str, max_age: Duration, secure: bool) -> Cookie<'_> {
    let max_age = time::Duration::try_from(max_age).unwrap_or(time::Duration::MAX);
    Cookie::build((COOKIE, value))
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .max_age(max_age)
        .secure(secure)
        .build()
}

/// The `Set-Cookie` value of session `id` (`Secure` when `secure`, under TLS).
pub fn cookie(id: &str, secure: bool) -> String {
    session_cookie(id, SESSION_TTL, secure).to_string()
}

/// Constant-time equality of two tokens (no early exit on the first differing byte); an empty
/// token equals nothing.
pub fn same(a: &str, b: &str) -> bool {
    !a.is_empty() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Failures counted in one [`FAILURE_WINDOW`].
#[derive(Clone, Copy)]
struct Window {
    count: u32,
    since: Instant,
}

impl Window {
    fn new(now: Instant) -> Self {
        Self { count: 0, since: now }
    }

    /// Restarts the window when it has ended; then how long is left of it if `limit` is
    /// reached.
    fn full(&mut self, now: Instant, limit: u32) -> Option<Duration> {
        let elapsed = now.saturating_duration_since(self.since);
        if elapsed >= FAILURE_WINDOW {
            *self = Self::new(now);
        }
        (self.count >= limit).then(|| FAILURE_WINDOW.saturating_sub(elapsed))
    }
}

/// Why an attempt was refused before hashing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoginRefused {
    /// Too many failures from this address; the wait until the window ends.
    Address(Duration),
    /// Too many failures from all addresses; the wait until the window ends.
    Overall(Duration),
    /// The hashing queue is full.
    Busy,
}

impl LoginRefused {
    /// The sentence the login page shows.
    pub fn message(self) -> String {
        match self {
            Self::Address(wait) => {
                format!("Too many failed logins; try again in {} s.", wait.as_secs() + 1)
            }
            Self::Overall(wait) => format!(
                "Too many failed logins to this router; try again in {} s.",
                wait.as_secs() + 1
            ),
            Self::Busy => "The router is busy checking other logins; try again.".into(),
        }
    }
}

/// Login attempts per client address and overall, counted before hashing.
pub struct LoginGate(Mutex<Gate>);

struct Gate {
    by_address: HashMap<IpAddr, Window>,
    overall: Window,
}

impl Default for LoginGate {
    fn default() -> Self {
        let gate = Gate { by_address: HashMap::new(), overall: Window::new(Instant::now()) };
        Self(Mutex::new(gate))
    }
}

impl LoginGate {
    /// Counts an attempt from `from` as a failure before it is checked, or refuses it when a
    /// limit is reached (nothing counted then).
    ///
    /// Errors: [`LoginRefused::Address`] or [`LoginRefused::Overall`] with the time left in the window.
    pub fn reserve(&self, from: IpAddr) -> Result<(), LoginRefused> {
        let now = Instant::now();
        let mut gate = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if gate.by_address.len() > 4096 {
            // Bounded memory under an address sweep: ended windows are dropped.
            gate.by_address.retain(|_, w| now.saturating_duration_since(w.since) < FAILURE_WINDOW);
        }
        let mine = gate.by_address.entry(from).or_insert_with(|| Window::new(now));
        if let Some(wait) = mine.full(now, MAX_FAILURES) {
            return Err(LoginRefused::Address(wait));
        }
        mine.count += 1;
        if let Some(wait) = gate.overall.full(now, MAX_FAILURES_OVERALL) {
            if let Some(mine) = gate.by_address.get_mut(&from) {
                mine.count -= 1;
            }
            return Err(LoginRefused::Overall(wait));
        }
        gate.overall.count += 1;
        Ok(())
    }

    /// Takes back an attempt [`Self::reserve`] counted that was never checked (the hashing
    /// queue was full).
    pub fn release(&self, from: IpAddr) {
        let mut gate = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(mine) = gate.by_address.get_mut(&from) {
            mine.count = mine.count.saturating_sub(1);
        }
        gate.overall.count = gate.overall.count.saturating_sub(1);
    }

    /// Forgets `from`'s failures after a successful login (its reserved attempt included).
    pub fn succeeded(&self, from: IpAddr) {
        let mut gate = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        gate.by_address.remove(&from);
        gate.overall.count = gate.overall.count.saturating_sub(1);
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// One worker thread that runs password hashing jobs one at a time, in order, with a bounded
/// queue. One thread also means one malloc arena: the 19 MiB an argon2id hash takes is reused,
/// not kept once per blocking thread. The thread ends when the `Hasher` is dropped.
pub struct Hasher(SyncSender<Job>);

impl Hasher {
    /// A worker with room for `queue` waiting jobs.
    pub fn new(queue: usize) -> Self {
        let (tx, rx) = sync_channel::<Job>(queue);
        // Without the thread, `run` reports every job as busy: logins fail closed.
        let _ = std::thread::Builder::new().name("argon2".into()).spawn(move || {
            while let Ok(job) = rx.recv() {
                job();
            }
        });
        Self(tx)
    }

    /// Queues `job` for the worker; its result arrives on the receiver.
    ///
    /// Errors: [`LoginRefused::Busy`] when the queue is full (or the worker is gone).
    pub fn submit<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<tokio::sync::oneshot::Receiver<T>, LoginRefused> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(job());
        });
        match self.0.try_send(job) {
            Ok(()) => Ok(rx),
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => Err(LoginRefused::Busy),
        }
    }

    /// Runs `job` on the worker and waits for its result.
    ///
    /// Errors: as [`Self::submit`].
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, LoginRefused> {
        self.submit(job)?.await.map_err(|_| LoginRefused::Busy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));

    fn cookie_headers(lines: &[&'static str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for line in lines {
            headers.append(header::COOKIE, axum::http::HeaderValue::from_static(line));
        }
        headers
    }

    #[test]
    fn the_session_cookie_carries_its_attributes_and_secure_only_under_tls() {
        let attributes = "HttpOnly; SameSite=Strict; Path=/; Max-Age=28800";
        assert_eq!(cookie("ab12", false), format!("routerd_session=ab12; {attributes}"));
        let tls = "routerd_session=ab12; HttpOnly; SameSite=Strict; Secure; Path=/; Max-Age=28800";
        assert_eq!(cookie("ab12", true), tls);
    }

    #[test]
    fn the_clearing_cookie_is_the_session_cookie_emptied_and_expired() {
        assert_eq!(CLEAR_COOKIE, session_cookie("", Duration::ZERO, false).to_string());
    }

    #[test]
    fn the_session_id_is_the_first_non_empty_session_cookie_of_all_headers() {
        assert_eq!(cookie_id(&cookie_headers(&[])), None);
        assert_eq!(cookie_id(&cookie_headers(&["theme=dark; other=1"])), None);
        let sent = [
            "theme=dark; routerd_session=; junk",
            "a=b;routerd_session=ab12",
            "routerd_session=cd",
        ];
        assert_eq!(cookie_id(&cookie_headers(&sent)).as_deref(), Some("ab12"));
        let first = cookie_headers(&["routerd_session=ab12; routerd_session=cd34"]);
        assert_eq!(cookie_id(&first).as_deref(), Some("ab12"));
        // Taken as sent: no percent-decoding, no other cookie's name taken for ours.
        let encoded = cookie_headers(&["routerd_session=%61b; xrouterd_session=cd"]);
        assert_eq!(cookie_id(&encoded).as_deref(), Some("%61b"));
    }

    #[test]
    fn tokens_are_the_same_only_when_equal_and_not_empty() {
        assert!(same("ab12", "ab12"));
        assert!(!same("ab12", "ab13"));
        assert!(!same("ab12", "ab1"));
        assert!(!same("ab1", "ab12"));
        assert!(!same("", ""));
        assert!(!same("", "ab12"));
    }

    #[test]
    fn attempts_are_counted_before_checking_and_forgiven_on_success() {
        let gate = LoginGate::default();
        for _ in 0..MAX_FAILURES {
            assert_eq!(gate.reserve(A), Ok(()));
        }
        assert!(matches!(gate.reserve(A), Err(LoginRefused::Address(_))));
        gate.succeeded(A);
        assert_eq!(gate.reserve(A), Ok(()));
    }

    #[test]
    fn many_addresses_reach_the_overall_limit() {
        let gate = LoginGate::default();
        let address = |i: u32| IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + i));
        for i in 0..MAX_FAILURES_OVERALL {
            assert_eq!(gate.reserve(address(i)), Ok(()));
        }
        let refused = gate.reserve(address(999));
        assert!(matches!(refused, Err(LoginRefused::Overall(_))), "{refused:?}");
        // The refused address was not counted.
        gate.release(address(0));
        assert_eq!(gate.reserve(address(999)), Ok(()));
    }

    #[test]
    fn the_hasher_runs_one_job_at_a_time_and_refuses_past_its_queue() {
        let hasher = Hasher::new(1);
        let (started_tx, started) = std::sync::mpsc::channel();
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let first = hasher
            .submit(move || {
                started_tx.send(()).ok();
                wait.recv().is_ok()
            })
            .expect("runs");
        started.recv().expect("the first job started");
        let second = hasher.submit(|| 2).expect("queued");
        assert_eq!(hasher.submit(|| 3).err(), Some(LoginRefused::Busy));
        release.send(()).expect("the first job waits");
        assert_eq!(futures::executor::block_on(first).ok(), Some(true));
        assert_eq!(futures::executor::block_on(second).ok(), Some(2));
    }
}
