//! Drawings of a large plan (issue 33 §3): whole while small, else grouped by resource kind or
//! around one resource, each a handful of nodes.

use std::time::SystemTime;

use routerd_engine::ConfigInput;
use routerd_engine::drawing::{GraphView, Shown};

use crate::support::{LAB, Lab, lab_with_routes};

/// Node lines of a DOT text (edges have no label).
fn nodes(dot: &str) -> Vec<&str> {
    dot.lines().filter(|l| l.contains("[label=")).collect()
}

#[tokio::test]
async fn a_thousand_route_plan_is_drawn_by_kind_or_around_one_resource() {
    let lab = Lab::new();
    let input = ConfigInput::parse(&lab_with_routes(1000, None), "router.yaml").expect("parses");
    let session = lab.session(true).await;
    let draw = |view: GraphView| {
        let (session, input) = (&session, &input);
        async move { session.drawing(input, &view, SystemTime::now()).await.expect("drawn") }
    };

    let small = ConfigInput::parse(LAB, "router.yaml").expect("parses");
    let whole = session
        .drawing(&small, &GraphView::Auto { up_to: 150 }, SystemTime::now())
        .await
        .expect("drawn");
    assert_eq!(whole.shown, Shown::Whole);
    assert_eq!(nodes(&whole.dot).len(), whole.artifacts, "{}", whole.dot);

    let kinds = draw(GraphView::Auto { up_to: 150 }).await;
    assert_eq!(kinds.shown, Shown::Kinds);
    assert!(kinds.artifacts > 1000, "{}", kinds.artifacts);
    let drawn = nodes(&kinds.dot);
    assert!(drawn.len() < 30, "{drawn:#?}");
    assert!(
        drawn
            .iter()
            .any(|n| n.contains("IPv4StaticRoute (1001 resources)\\n1001 items\\n1001 create")),
        "{drawn:#?}"
    );
    assert!(kinds.dot.contains("\"group/IPv4StaticRoute (1001 resources)\" -> \"group/Interface"));

    // Around the LAN interface: its own artifacts one by one, the routes on it one node.
    let lan = draw(GraphView::Resource("net.routerd.net/v1alpha1/Interface/lan".into())).await;
    assert_eq!(lan.shown, Shown::Resource);
    assert!(lan.own > 0);
    let drawn = nodes(&lan.dot);
    assert!(drawn.len() < 40, "{drawn:#?}");
    assert!(drawn.iter().any(|n| n.contains("\"linux.link/lan0\"")), "{drawn:#?}");
    assert!(drawn.iter().any(|n| n.contains("IPv4StaticRoute (1000 resources)")), "{drawn:#?}");

    // Around one route: the route and the interface it needs, nothing of the other routes.
    let one =
        draw(GraphView::Resource("net.routerd.net/v1alpha1/IPv4StaticRoute/bulk7".into())).await;
    let drawn = nodes(&one.dot);
    assert_eq!(one.own, 1);
    assert!(drawn.iter().any(|n| n.contains("10.100.7.0/24")), "{drawn:#?}");
    assert!(drawn.iter().any(|n| n.contains("\"group/Interface/lan\"")), "{drawn:#?}");
    assert!(!one.dot.contains("bulk8") && !one.dot.contains("10.100.8.0/24"), "{}", one.dot);

    // A resource the plan does not hold: nothing of its own.
    let none = draw(GraphView::Resource("net.routerd.net/v1alpha1/Interface/nope".into())).await;
    assert_eq!(none.own, 0);
}
