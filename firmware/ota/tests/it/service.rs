//! What the running RAUC exports, and how the client tells RAUC's refusals from the bus's.

use routerd_ota::{Call, OtaError};
use zbus::fdo::IntrospectableProxy;

use crate::support::COMPATIBLE;

/// The methods, properties and signal the client relies on exist on this RAUC (1.8 on
/// Debian 12): `InspectBundle` or its older stand-in `Info`, and everything else by name.
#[tokio::test]
async fn the_running_rauc_exports_what_the_client_calls() {
    let fixture = crate::support::start().await;
    let conn = zbus::connection::Builder::address(fixture.address())
        .expect("address")
        .build()
        .await
        .expect("connect");
    let xml = IntrospectableProxy::builder(&conn)
        .destination("de.pengutronix.rauc")
        .and_then(|b| b.path("/"))
        .expect("proxy")
        .build()
        .await
        .expect("proxy")
        .introspect()
        .await
        .expect("Introspect");
    let start = xml.find(r#"<interface name="de.pengutronix.rauc.Installer">"#);
    let installer = start.map(|at| &xml[at..]).expect("de.pengutronix.rauc.Installer at /");
    let installer = &installer[..installer.find("</interface>").expect("interface closes")];
    let methods = names(installer, "method");
    let properties = names(installer, "property");
    let signals = names(installer, "signal");
    eprintln!("methods: {methods:?}\nproperties: {properties:?}\nsignals: {signals:?}");
    assert!(
        methods.iter().any(|m| m == "InspectBundle" || m == "Info"),
        "neither InspectBundle nor Info: {methods:?}"
    );
    for method in ["InstallBundle", "Mark", "GetSlotStatus", "GetPrimary"] {
        assert!(methods.iter().any(|m| m == method), "{method} missing: {methods:?}");
    }
    for property in ["Operation", "LastError", "Progress", "Compatible", "Variant", "BootSlot"] {
        assert!(properties.iter().any(|p| p == property), "{property} missing: {properties:?}");
    }
    assert_eq!(signals, ["Completed"]);
}

/// The `name` attributes of every `<tag …>` element in an introspection XML fragment.
fn names(xml: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag} ");
    xml.match_indices(&open)
        .filter_map(|(at, _)| {
            let element = &xml[at..at + xml[at..].find('>')?];
            let value = &element[element.find(" name=\"")? + 7..];
            Some(value[..value.find('"')?].to_string())
        })
        .collect()
}

#[tokio::test]
async fn properties_report_the_test_system_while_idle() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    assert_eq!(rauc.compatible().await.expect("Compatible"), COMPATIBLE);
    assert_eq!(rauc.boot_slot().await.expect("BootSlot"), "A");
    assert_eq!(rauc.operation().await.expect("Operation"), "idle");
    assert_eq!(rauc.variant().await.expect("Variant"), "");
    assert_eq!(rauc.last_error().await.expect("LastError"), "");
}

/// With RAUC gone the bus answers, not RAUC: that is a transport error, never "RAUC refused".
#[tokio::test]
async fn rauc_not_running_is_a_transport_error_not_a_refusal() {
    let mut fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    fixture.stop_rauc_and_wait().await;
    let err = rauc.primary().await.expect_err("nobody owns de.pengutronix.rauc");
    assert!(!err.is_refused(), "{err}");
    match &err {
        OtaError::Transport { call: Call::GetPrimary, source } => match source.as_ref() {
            zbus::Error::MethodError(name, ..) => {
                assert_eq!(name.as_str(), "org.freedesktop.DBus.Error.ServiceUnknown");
            }
            other => panic!("not an error reply of the bus: {other:?}"),
        },
        other => panic!("not a transport error of GetPrimary: {other:?}"),
    }
}
