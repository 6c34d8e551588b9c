//! The dependency graph page: the planned transition of the applied config (the engine's DOT
//! export) drawn as SVG by layout-rs, a pure-Rust Graphviz-style layout.
//!
//! ```text
//! GET /graph       the page: counts, the colour legend, the drawing, a link to the DOT
//! GET /graph.svg   the drawing (its own CSP: the SVG carries an inline <style>)
//! GET /graph.dot   the DOT text, for Graphviz on the operator's machine
//! ```
//!
//! The page embeds the drawing as an `<object>` (an `<img>` cannot be scripted) and
//! `routerd.js` has svg-pan-zoom (embedded, `assets/svg-pan-zoom.min.js`) fit it to the view on
//! load, zoom it (wheel, the + and − buttons) and pan it (drag); Fit fits it again. Without
//! script the object shows the drawing at its own size, scrolled.
//!
//! The layout is done by [`render_svg`], which the daemon runs in a child process of its own
//! (`Backend::graph_svg`): the layout library asserts in places, and a panic there must cost a
//! page, not the daemon (release builds abort on panic), and its memory is returned when the
//! child exits.

use std::sync::Arc;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use serde::Deserialize;

use crate::assets::Links;
use crate::config::SignedIn;
use crate::{AppState, Backend, render};

/// Above this many nodes the edge-crossing optimisation is skipped (it grows much faster than
/// the graph: 600 nodes took 5 s with it, 0.14 s without).
const OPTIMISE_UP_TO: usize = 150;

/// Above this many nodes nothing is drawn: the page links the DOT text instead.
pub const DRAW_UP_TO: usize = 2_000;

/// Above this many artifacts the page draws one node per resource kind, not every artifact: a
/// plan of 1,000 routes drawn whole is an image some 600,000 pixels wide.
pub const WHOLE_UP_TO: usize = 150;

/// Which drawing the page asks for (`/graph`, `?resource=ID`, `?view=whole`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum GraphChoice {
    /// Every artifact up to [`WHOLE_UP_TO`], else one node per resource kind.
    #[default]
    Auto,
    /// Every artifact, however many (drawn up to [`DRAW_UP_TO`] nodes).
    Whole,
    /// One resource's artifacts and their neighbours, folded into one node per neighbouring
    /// resource (per resource kind where a kind has many).
    Resource(String),
}

/// What a drawing shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GraphShown {
    /// Every artifact.
    #[default]
    Whole,
    /// One node per resource kind.
    Kinds,
    /// One resource and its neighbours.
    Resource,
}

/// A drawn graph.
#[derive(Clone, Debug, Default)]
pub struct GraphSvg {
    /// Nodes in the drawing.
    pub nodes: usize,
    /// The SVG document, or `None` when the drawing has more than [`DRAW_UP_TO`] nodes.
    pub svg: Option<String>,
    /// What it shows.
    pub shown: GraphShown,
    /// Artifacts in the plan.
    pub artifacts: usize,
    /// For [`GraphShown::Resource`]: the resource's own artifacts (0: not in the plan).
    pub own: usize,
}

/// Lays out Graphviz DOT `dot` and draws it as an SVG document (`shown`, `artifacts` and `own`
/// left at their defaults for the caller to fill).
///
/// Errors: the DOT does not parse (the parser's message). Panics where layout-rs does; run it
/// where a panic is contained (see the module docs).
pub fn render_svg(dot: &str) -> Result<GraphSvg, String> {
    let mut parser = layout::gv::DotParser::new(dot);
    let ast = parser.process()?;
    let mut builder = layout::gv::GraphBuilder::new();
    builder.visit_graph(&ast);
    let mut graph = builder.get();
    let nodes = graph.num_nodes();
    if nodes > DRAW_UP_TO {
        return Ok(GraphSvg { nodes, ..GraphSvg::default() });
    }
    let mut svg = layout::backends::svg::SVGWriter::new();
    graph.do_it(false, nodes > OPTIMISE_UP_TO, false, &mut svg);
    Ok(GraphSvg { nodes, svg: Some(svg.finalize()), ..GraphSvg::default() })
}

/// The query of `/graph` and `/graph.svg`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct GraphQuery {
    /// A resource ID: draw around it.
    #[serde(default)]
    resource: Option<String>,
    /// `whole`: every artifact.
    #[serde(default)]
    view: Option<String>,
}

impl GraphQuery {
    fn choice(&self) -> GraphChoice {
        match (self.resource.as_deref().map(str::trim), self.view.as_deref()) {
            (Some(id), _) if !id.is_empty() => GraphChoice::Resource(id.to_string()),
            (_, Some("whole")) => GraphChoice::Whole,
            _ => GraphChoice::Auto,
        }
    }

    /// The query string that asks for the same drawing (`?resource=…`), for the image.
    fn again(&self) -> String {
        match self.choice() {
            GraphChoice::Auto => String::new(),
            GraphChoice::Whole => "?view=whole".into(),
            GraphChoice::Resource(id) => format!("?resource={}", encode(&id)),
        }
    }
}

/// Percent-encodes `text` for a query value (RFC 3986 unreserved characters kept).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[derive(Template)]
#[template(path = "graph.html")]
struct GraphPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    drawing: GraphSvg,
    kinds: bool,
    around: Option<String>,
    image: String,
    limit: usize,
    whole_up_to: usize,
    resources: Vec<String>,
    error: Option<String>,
}

/// `GET /graph[?resource=ID|?view=whole]`.
pub(crate) async fn page<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
    Query(query): Query<GraphQuery>,
) -> Response {
    let choice = query.choice();
    let (drawing, error) = match app.backend.graph_svg(choice.clone()).await {
        Ok(g) => (g, None),
        Err(e) => (GraphSvg::default(), Some(e)),
    };
    let around = match choice {
        GraphChoice::Resource(id) => Some(id),
        _ => None,
    };
    let page = GraphPage {
        assets: Links::get(),
        signed_in: true,
        csrf: session.csrf,
        kinds: drawing.shown == GraphShown::Kinds,
        drawing,
        around,
        image: format!("/graph.svg{}", query.again()),
        limit: DRAW_UP_TO,
        whole_up_to: WHOLE_UP_TO,
        resources: app.backend.resource_ids(),
        error,
    };
    render(&page, StatusCode::OK)
}

/// `GET /graph.svg[?resource=ID|?view=whole]`: embedded by the page as an `<object>`
/// (`frame-ancestors 'self'`, which browsers heed over the `X-Frame-Options: DENY` every response
/// gets); it runs no script of its own (no `script-src`: the page's script pans and zooms it from
/// outside); its inline `<style>` needs `style-src 'unsafe-inline'`, granted to this response
/// only.
pub(crate) async fn svg<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(_): SignedIn,
    Query(query): Query<GraphQuery>,
) -> Response {
    match app.backend.graph_svg(query.choice()).await {
        Ok(GraphSvg { svg: Some(svg), .. }) => {
            let mut response = ([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response();
            response.headers_mut().insert(
                "content-security-policy",
                HeaderValue::from_static(
                    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'",
                ),
            );
            response
        }
        Ok(GraphSvg { nodes, svg: None, .. }) => (
            StatusCode::NOT_FOUND,
            format!("{nodes} nodes: more than {DRAW_UP_TO}, not drawn; see /graph.dot"),
        )
            .into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, e).into_response(),
    }
}

/// `GET /graph.dot`: the DOT text of every artifact, as a download.
pub(crate) async fn dot<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(_): SignedIn,
) -> Response {
    match app.backend.graph_dot().await {
        Ok(dot) => (
            [
                (header::CONTENT_TYPE, "text/vnd.graphviz; charset=utf-8"),
                (header::CONTENT_DISPOSITION, "attachment; filename=\"routerd-plan.dot\""),
            ],
            dot,
        )
            .into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, e).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DOT text shaped like the engine's export (`routerd_graph::Plan::to_dot`): clusters,
    /// escaped labels with newlines, colours, dotted missing nodes, edges to absent nodes.
    fn engine_like(nodes: usize, seed: u64) -> String {
        let mut state = seed;
        let mut next = |bound: usize| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            usize::try_from(state >> 33).unwrap_or(0) % bound.max(1)
        };
        let mut dot = String::from(
            "digraph \"lab <&>\" {\n  label=\"lab\";\n  rankdir=BT;\n  node [shape=box, style=rounded];\n",
        );
        for i in 0..nodes {
            if i % 7 == 0 {
                dot.push_str(&format!("  subgraph \"cluster_{i}\" {{\n    label=\"r{i}\";\n"));
            }
            let colour = ["darkgreen", "blue", "red", "purple", "gray"][next(5)];
            dot.push_str(&format!(
                "    \"k/{i}\" [label=\"route 10.{i}.0.0/16 \\\"x\\\" <&>\\ncreate\", color={colour}];\n"
            ));
            if i % 7 == 6 || i + 1 == nodes {
                dot.push_str("  }\n");
            }
        }
        dot.push_str("  \"gone\" [label=\"gone\\n(missing)\", style=dotted];\n");
        for i in 1..nodes {
            for _ in 0..next(3) {
                let to = next(i);
                dot.push_str(&format!(
                    "  \"k/{i}\" -> \"k/{to}\" [tooltip=\"needs\", arrowhead=diamond, style=bold];\n"
                ));
            }
            if next(10) == 0 {
                dot.push_str(&format!("  \"k/{i}\" -> \"gone\" [tooltip=\"t\"];\n"));
            }
        }
        dot.push_str("}\n");
        dot
    }

    #[test]
    fn engine_shaped_graphs_are_drawn_with_their_labels_escaped() {
        for (nodes, seed) in [(1, 1), (2, 2), (12, 3), (60, 4), (200, 5)] {
            let dot = engine_like(nodes, seed);
            let drawn = render_svg(&dot).unwrap_or_else(|e| panic!("{nodes} nodes: {e}"));
            // Every node plus the missing one.
            assert_eq!(drawn.nodes, nodes + 1);
            let svg = drawn.svg.expect("drawn");
            assert!(svg.contains("<svg"), "{svg:.200}");
            assert!(svg.contains("&lt;&amp;&gt;"), "labels are escaped");
            assert!(!svg.contains("<&>"), "no raw markup from labels");
        }
    }

    #[test]
    fn a_huge_graph_is_counted_not_drawn() {
        let dot = engine_like(DRAW_UP_TO + 5, 9);
        let drawn = render_svg(&dot).expect("parses");
        assert_eq!(drawn.nodes, DRAW_UP_TO + 6);
        assert!(drawn.svg.is_none());
    }

    #[test]
    fn bad_dot_is_an_error_not_a_panic() {
        assert!(render_svg("digraph { a -> ; }").is_err());
    }
}
