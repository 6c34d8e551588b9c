//! Helpers shared by the integration tests.

use routerd_model::{Config, ConfigError, ConfigErrors, parse_config};
use routerd_test_kit::router::{self, NET, RouterDoc};

/// The all-kinds fixture text.
pub const ALL_KINDS: &str = include_str!("../fixtures/all-kinds.yaml");

/// Parses `source` as `router.yaml`, failing the test with the errors if it does not parse.
pub fn config_of(source: &str) -> Config {
    match parse_config(source, "router.yaml") {
        Ok(config) => config,
        Err(errors) => panic!("expected a valid config, got:\n{errors}"),
    }
}

/// Parses `source` as `router.yaml` and returns its errors, failing the test if it parses.
pub fn errors_of(source: &str) -> ConfigErrors {
    match parse_config(source, "router.yaml") {
        Ok(_) => panic!("expected errors, config parsed"),
        Err(errors) => errors,
    }
}

/// The only error of `source`, failing the test if there is not exactly one.
pub fn single_error(source: &str) -> ConfigError {
    let errors = errors_of(source);
    assert_eq!(errors.len(), 1, "expected one error, got:\n{errors}");
    errors.into_iter().next().expect("one error")
}

/// Asserts an error's position, resource ID, path and message in one go.
pub fn assert_error(
    error: &ConfigError,
    (line, column): (u32, u32),
    resource: Option<&str>,
    path: &str,
    message: &str,
) {
    assert_eq!((error.line, error.column), (line, column), "position of {error}");
    assert_eq!(error.resource.as_deref(), resource, "resource of {error}");
    assert_eq!(error.path, path, "path of {error}");
    assert_eq!(error.message, message, "message of {error}");
}

/// A `Router` document whose `spec.resources` items are `resources` (indented by four
/// spaces). The header takes lines 1 to 6, so the first resource starts on line 7.
pub fn document(resources: &str) -> String {
    RouterDoc::new("test").raw(resources).to_string()
}

/// An `Interface` resource item, seven lines long.
pub fn interface(name: &str, ifname: &str) -> String {
    router::item(NET, "Interface", name, &format!("ifname: {ifname}\nmanaged: true"))
}
