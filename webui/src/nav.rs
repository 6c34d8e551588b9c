//! Which page a request is for, so the navigation marks it (`aria-current="page"`, WAI-ARIA
//! 1.2) without every page's template struct carrying it: a middleware keeps the request's
//! path in a task-local value for as long as its handler runs, and the base template asks
//! [`is_current`] for each link.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

tokio::task_local! {
    static PATH: String;
}

/// Runs the request's handler with its path remembered.
pub(crate) async fn remember_path(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    PATH.scope(path, next.run(request)).await
}

/// Whether the navigation link to `href` is the page being rendered: the same path, or one
/// under it (`/history/diff` is under History); `/` only for itself.
pub(crate) fn is_current(href: &str) -> bool {
    PATH.try_with(|path| under(path, href)).unwrap_or(false)
}

fn under(path: &str, href: &str) -> bool {
    path == href
        || (href != "/" && path.strip_prefix(href).is_some_and(|rest| rest.starts_with('/')))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_page_under_a_link_is_current_and_the_overview_only_for_itself() {
        assert!(super::under("/history/diff", "/history"));
        assert!(super::under("/config", "/config"));
        assert!(!super::under("/configure", "/config"));
        assert!(!super::under("/config", "/"));
        assert!(super::under("/", "/"));
    }
}
