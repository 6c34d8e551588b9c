//! Sessions, CSRF tokens and login rate limiting (in memory: a restart logs everyone out).
//!
//! - A session is a random 128-bit id in a cookie (`HttpOnly; SameSite=Strict`, plus `Secure`
//!   under TLS), valid for [`SESSION_TTL`] from login; each has its own CSRF token, which every
//!   state-changing form carries back.
//! - Failed logins are counted per client address: after [`MAX_FAILURES`] within
//!   [`FAILURE_WINDOW`], further attempts from that address are refused until the window ends.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};

/// The session cookie's name.
pub const COOKIE: &str = "routerd_session";
/// Clears the session cookie.
pub const CLEAR_COOKIE: &str = "routerd_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0";
/// How long a session lasts after login.
pub const SESSION_TTL: Duration = Duration::from_secs(8 * 3600);
/// Failed logins allowed per address within [`FAILURE_WINDOW`].
pub const MAX_FAILURES: u32 = 5;
/// The window failed logins are counted in.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(60);

/// A signed-in session.
#[derive(Clone, Debug)]
pub struct Session {
    /// The token its forms must carry.
    pub csrf: String,
    expires: Instant,
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

/// The session id in `headers`' cookie, if any.
fn cookie_id(headers: &HeaderMap) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).find_map(|line| {
        line.split(';').find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == COOKIE && !value.is_empty()).then(|| value.to_string())
        })
    })
}

impl Sessions {
    /// A new session: its id and CSRF token.
    pub fn create(&self) -> (String, String) {
        let id = random_id();
        let csrf = random_id();
        let mut map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        map.retain(|_, s| s.expires > now);
        if !id.is_empty() {
            map.insert(id.clone(), Session { csrf: csrf.clone(), expires: now + SESSION_TTL });
        }
        (id, csrf)
    }

    /// The live session `headers` carry.
    pub fn get(&self, headers: &HeaderMap) -> Option<Session> {
        let id = cookie_id(headers)?;
        let map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        map.get(&id).filter(|s| s.expires > Instant::now()).cloned()
    }

    /// Ends the session `headers` carry.
    pub fn remove(&self, headers: &HeaderMap) {
        if let Some(id) = cookie_id(headers) {
            self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&id);
        }
    }
}

/// The `Set-Cookie` value of session `id`.
pub fn cookie(id: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{COOKIE}={id}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
        SESSION_TTL.as_secs()
    )
}

/// Constant-time equality of two tokens (no early exit on the first differing byte).
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && !a.is_empty()
        && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Failed logins per client address.
#[derive(Default)]
pub struct Attempts(Mutex<HashMap<IpAddr, (u32, Instant)>>);

impl Attempts {
    /// How long `from` must still wait, when it is over the limit.
    pub fn blocked(&self, from: IpAddr) -> Option<Duration> {
        let map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (count, since) = map.get(&from)?;
        let elapsed = since.elapsed();
        (*count >= MAX_FAILURES && elapsed < FAILURE_WINDOW).then(|| FAILURE_WINDOW - elapsed)
    }

    /// Counts a failure from `from`.
    pub fn failed(&self, from: IpAddr) {
        let mut map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = map.entry(from).or_insert((0, Instant::now()));
        if entry.1.elapsed() >= FAILURE_WINDOW {
            *entry = (0, Instant::now());
        }
        entry.0 += 1;
    }

    /// Forgets `from`'s failures after a successful login.
    pub fn succeeded(&self, from: IpAddr) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&from);
    }
}
