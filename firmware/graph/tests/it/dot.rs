//! DOT export of graphs and plans.

use routerd_graph::{Dependency, Graph, Selection, plan};

use crate::support::{Kind::*, Mock, TestItem, create, graph, item, key};

#[test]
fn graph_dot_contains_nodes_edges_and_subgraphs() {
    let mut intended = Graph::new();
    intended.put_in("wan", item(Link, "eth0"));
    intended.put_in("wan", item(Addr, "wan").dep(Link, "eth0"));
    intended.put(item(Route, "default").dep(Addr, "wan").dep(Link, "gone"));

    let dot = intended.to_dot("intended");

    assert!(dot.starts_with("digraph \"intended\" {"), "{dot}");
    assert!(dot.contains("\"link/eth0\" [label=\"link/eth0\"];"), "{dot}");
    assert!(dot.contains("\"addr/wan\" -> \"link/eth0\""), "{dot}");
    assert!(dot.contains("\"route/default\" -> \"addr/wan\""), "{dot}");
    assert!(dot.contains("label=\"wan\";"), "a cluster per subgraph: {dot}");
    assert!(
        dot.contains("\"link/gone\" [label=\"link/gone\\n(missing)\", style=dotted];"),
        "{dot}"
    );
    assert!(dot.trim_end().ends_with('}'));
}

#[tokio::test]
async fn current_graph_dot_marks_failed_and_pending_items() {
    let mock = Mock::new();
    mock.fail(create(Link, "eth0"));
    let mut current = graph([item(Link, "up").external()]);
    let intended = graph([item(Link, "eth0"), item(Addr, "wan").dep(Link, "eth0")]);
    mock.reconcile(&mut current, &intended).await;

    let dot = current.to_dot("current");

    assert!(
        dot.contains("\"link/eth0\" [label=\"link/eth0\\nfailed\", style=dashed, color=red];"),
        "{dot}"
    );
    assert!(
        dot.contains("\"addr/wan\" [label=\"addr/wan\\npending\", style=dashed, color=gray];"),
        "{dot}"
    );
    assert!(dot.contains("\"link/up\" [label=\"link/up\", style=\"rounded,dashed\"];"), "{dot}");
}

#[test]
fn plan_dot_colors_nodes_by_operation() {
    let current = graph([
        item(Link, "eth0").recreating(),
        item(Addr, "wan").dep(Link, "eth0"),
        item(Link, "eth1"),
        item(Svc, "old"),
    ]);
    let must_be_v2 =
        Dependency::on(key(Link, "eth1"), "needs v2").must_satisfy(|l: &TestItem| l.value == "v2");
    let intended = graph([
        item(Link, "eth0").value("v2").recreating(),
        item(Addr, "wan").dep(Link, "eth0"),
        item(Link, "eth1").value("v3"),
        item(Svc, "new"),
        item(Svc, "blocked").dep_with(must_be_v2),
    ]);
    let recreate =
        |cur: &TestItem, int: &TestItem| int.recreate_on_change && cur.value != int.value;

    let planned = plan(&current, &intended, &recreate, Selection::All).expect("acyclic");
    let dot = planned.to_dot(&current, &intended, "transition");

    assert!(dot.contains("\"link/eth0\" [label=\"link/eth0\\nrecreate\", color=purple];"), "{dot}");
    assert!(dot.contains("\"addr/wan\" [label=\"addr/wan\\nrecreate\", color=purple];"), "{dot}");
    assert!(dot.contains("\"link/eth1\" [label=\"link/eth1\\nmodify\", color=blue];"), "{dot}");
    assert!(dot.contains("\"svc/old\" [label=\"svc/old\\ndelete\", color=red];"), "{dot}");
    assert!(dot.contains("\"svc/new\" [label=\"svc/new\\ncreate\", color=darkgreen];"), "{dot}");
    assert!(dot.contains("\"svc/blocked\" [label=\"svc/blocked\\npending\""), "{dot}");
    assert!(
        dot.contains("\"svc/blocked\" -> \"link/eth1\" [tooltip=\"needs v2\", arrowhead=diamond];")
    );
}

#[test]
fn grouped_plan_dot_merges_groups_counts_operations_and_hides_the_rest() {
    use routerd_graph::Item;
    use routerd_graph::dot::Place;
    let current = graph([item(Link, "eth0"), item(Svc, "old")]);
    let intended = graph([
        item(Link, "eth0"),
        item(Route, "a").dep(Link, "eth0"),
        item(Route, "b").dep(Link, "eth0").dep(Route, "a"),
        item(Addr, "x").dep(Link, "gone"),
        item(Svc, "hidden").dep(Link, "eth0"),
    ]);
    let none = |_: &TestItem, _: &TestItem| false;
    let planned = plan(&current, &intended, &none, Selection::All).expect("acyclic");
    let place = |i: &TestItem| match i.key().to_string().as_str() {
        "route/a" | "route/b" => Place::Group("routes".into()),
        "svc/hidden" | "svc/old" => Place::Hidden,
        _ => Place::Own,
    };
    let dot = planned.to_dot_grouped(&current, &intended, "g", place);

    assert!(
        dot.contains("\"group/routes\" [label=\"routes\\n2 items\\n2 create\", color=darkgreen];"),
        "{dot}"
    );
    // One edge for the group's two dependencies on the link, none inside the group.
    assert_eq!(dot.matches("\"group/routes\" -> \"link/eth0\";").count(), 1, "{dot}");
    assert!(!dot.contains("\"group/routes\" -> \"group/routes\""), "{dot}");
    assert!(dot.contains("\"link/eth0\" [label=\"link/eth0\"];"), "{dot}");
    assert!(!dot.contains("svc/"), "hidden items and their edges are left out: {dot}");
    assert!(dot.contains("\"link/gone\" [label=\"link/gone\\n(missing)\", style=dotted];"));
    assert!(dot.contains("\"addr/x\" -> \"link/gone\";"), "{dot}");
}
