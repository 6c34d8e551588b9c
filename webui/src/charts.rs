//! Charts of the daemon's recent history (issue 34 §6): per interface the bits per second
//! received and sent and the errors, per gateway the round-trip time and loss, and each
//! reconcile's duration coloured by the phase it left. Drawn on the server as SVG by
//! `plotters` (its SVG backend only: no fonts, no images, text as SVG `<text>`), inlined in
//! the page: presentation attributes only, no `style`, so the page's CSP holds.
//!
//! `/interfaces` shows every chart; the Overview shows the reconciles, the gateways and the
//! busiest interfaces. Both refresh their chart panel with htmx every sample interval.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use plotters::prelude::*;

use crate::assets::Links;
use crate::config::SignedIn;
use crate::{AppState, Backend, render};

/// How far back a chart reaches, in minutes.
pub const WINDOW_MINUTES: u64 = 60;

/// The shortest x axis, in minutes.
const MIN_MINUTES: f64 = 5.0;

/// Width and height of a chart's SVG user space (CSS scales it to its box).
const SIZE: (u32, u32) = (640, 200);

/// The history the daemon keeps for charts.
#[derive(Clone, Debug, Default)]
pub struct SeriesView {
    /// Now, milliseconds since the Unix epoch (the charts' right edge).
    pub now_unix_ms: u64,
    /// Seconds between two interface samples.
    pub interval_seconds: u64,
    /// Every charted interface, by name.
    pub interfaces: Vec<LinkSeries>,
    /// Every default route's gateway.
    pub gateways: Vec<GatewaySeries>,
    /// The reconciles, oldest first.
    pub reconciles: Vec<ReconcilePoint>,
}

/// One interface's points, oldest first.
#[derive(Clone, Debug, Default)]
pub struct LinkSeries {
    /// The interface name.
    pub ifname: String,
    /// Its points.
    pub points: Vec<LinkPoint>,
}

/// One interface over one sample interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkPoint {
    /// End of the interval, milliseconds since the Unix epoch.
    pub at_unix_ms: u64,
    /// Bits per second received.
    pub rx_bps: f64,
    /// Bits per second sent.
    pub tx_bps: f64,
    /// Receive errors in the interval.
    pub rx_errors: u64,
    /// Transmit errors in the interval.
    pub tx_errors: u64,
}

/// One gateway's probes, oldest first.
#[derive(Clone, Debug, Default)]
pub struct GatewaySeries {
    /// The gateway's address.
    pub gateway: String,
    /// The interface it is reached through.
    pub interface: String,
    /// Its points.
    pub points: Vec<GatewayPoint>,
}

/// One gateway probe.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GatewayPoint {
    /// When, milliseconds since the Unix epoch.
    pub at_unix_ms: u64,
    /// Round-trip time in milliseconds; `None`: no answer.
    pub rtt_ms: Option<f64>,
    /// Loss over the recent probes, percent.
    pub loss_percent: f64,
}

/// One finished reconcile.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReconcilePoint {
    /// When it started, milliseconds since the Unix epoch.
    pub at_unix_ms: u64,
    /// How long it took, milliseconds.
    pub duration_ms: u64,
    /// The phase it left (`Healthy`, `Drifted`, `RequiresAdoption`, `Blocked`).
    pub phase: String,
}

/// A drawn chart: its heading and its SVG (empty with `empty` when there is nothing to draw).
#[derive(Clone, Debug)]
pub(crate) struct Chart {
    /// What it shows (`lan0: bit/s`).
    pub(crate) title: String,
    /// The SVG element, safe to inline (drawn from numbers and our own labels, escaped).
    pub(crate) svg: String,
    /// Why nothing is drawn, when nothing is.
    pub(crate) empty: Option<&'static str>,
    /// The figures of the last point, as a sentence for screen readers and small screens.
    pub(crate) last: String,
}

/// One line of a chart.
struct Line<'a> {
    label: &'a str,
    colour: RGBColor,
    points: Vec<(f64, f64)>,
}

const RX: RGBColor = RGBColor(0x1f, 0x6f, 0xeb);
const TX: RGBColor = RGBColor(0x1a, 0x7f, 0x37);
const BAD: RGBColor = RGBColor(0xcf, 0x22, 0x2e);
const WARN: RGBColor = RGBColor(0x9a, 0x67, 0x00);

/// Minutes before `now` of `at` (negative: the chart's x axis runs from -60 to 0).
fn minutes(now: u64, at: u64) -> f64 {
    -((now.saturating_sub(at)) as f64 / 60_000.0)
}

/// `1.2 Mbit/s`, `830 bit/s`.
pub(crate) fn bits(v: f64) -> String {
    scaled(v, "bit/s")
}

fn scaled(v: f64, unit: &str) -> String {
    let (div, prefix) = match v.abs() {
        x if x >= 1e9 => (1e9, "G"),
        x if x >= 1e6 => (1e6, "M"),
        x if x >= 1e3 => (1e3, "k"),
        _ => (1.0, ""),
    };
    let n = v / div;
    if n.fract() == 0.0 || n >= 100.0 {
        format!("{n:.0} {prefix}{unit}")
    } else {
        format!("{n:.1} {prefix}{unit}")
    }
}

/// Draws `lines` over the last hour with `y_label` formatting the y axis; `None` when no line
/// has a point. Points are drawn as dots with `dots` (a reconcile is an event, not a level).
fn draw(
    lines: &[Line<'_>],
    y_format: &dyn Fn(&f64) -> String,
    dots: bool,
    y_min_top: f64,
) -> Option<String> {
    if lines.iter().all(|l| l.points.is_empty()) {
        return None;
    }
    let top =
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)).fold(y_min_top, f64::max) * 1.1;
    // The x axis reaches back to the oldest point (at least [`MIN_MINUTES`], at most the
    // window): a daemon started a minute ago shows its minute, not a line at the edge.
    let oldest = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).fold(0f64, f64::min);
    let from = oldest.floor().clamp(-(WINDOW_MINUTES as f64), -MIN_MINUTES);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let mut chart = ChartBuilder::on(&root)
            .margin(6)
            .x_label_area_size(22)
            .y_label_area_size(74)
            .build_cartesian_2d(from..0f64, 0f64..top)
            .ok()?;
        chart
            .configure_mesh()
            .x_labels(7)
            .y_labels(5)
            .x_label_formatter(&|m| match m.round() {
                0.0 => "now".into(),
                m => format!("{m:.0} min"),
            })
            .y_label_formatter(y_format)
            .light_line_style(WHITE)
            .label_style(("sans-serif", 12))
            .draw()
            .ok()?;
        for line in lines {
            let style = ShapeStyle::from(&line.colour).stroke_width(2);
            let series = if dots {
                chart
                    .draw_series(
                        line.points.iter().map(|p| Circle::new(*p, 3, line.colour.filled())),
                    )
                    .ok()?
            } else {
                chart.draw_series(LineSeries::new(line.points.iter().copied(), style)).ok()?
            };
            let colour = line.colour;
            series.label(line.label).legend(move |(x, y)| {
                Rectangle::new([(x, y - 4), (x + 12, y + 4)], colour.filled())
            });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.2))
            .label_font(("sans-serif", 12))
            .draw()
            .ok()?;
        root.present().ok()?;
    }
    Some(svg.replacen("<svg ", "<svg role=\"img\" focusable=\"false\" ", 1))
}

/// A count's tick label: whole numbers only (no "0" twice for 0 and 0.5).
fn whole(v: &f64) -> String {
    if v.fract() == 0.0 { format!("{v:.0}") } else { String::new() }
}

fn chart(title: String, svg: Option<String>, last: String) -> Chart {
    match svg {
        Some(svg) => Chart { title, svg, empty: None, last },
        None => Chart { title, svg: String::new(), empty: Some("No samples yet."), last },
    }
}

/// The bit rate chart of `link`.
pub(crate) fn link_bits(link: &LinkSeries, now: u64) -> Chart {
    let rx = link.points.iter().map(|p| (minutes(now, p.at_unix_ms), p.rx_bps)).collect();
    let tx = link.points.iter().map(|p| (minutes(now, p.at_unix_ms), p.tx_bps)).collect();
    let lines = [
        Line { label: "receive", colour: RX, points: rx },
        Line { label: "send", colour: TX, points: tx },
    ];
    let last = link.points.last().map_or_else(String::new, |p| {
        format!("now {} received, {} sent", bits(p.rx_bps), bits(p.tx_bps))
    });
    chart(format!("{}: bit/s", link.ifname), draw(&lines, &|v| bits(*v), false, 1000.0), last)
}

/// The error chart of `link` (errors per sample interval).
pub(crate) fn link_errors(link: &LinkSeries, now: u64, interval: u64) -> Chart {
    let at = |p: &LinkPoint| minutes(now, p.at_unix_ms);
    let rx = link.points.iter().map(|p| (at(p), p.rx_errors as f64)).collect();
    let tx = link.points.iter().map(|p| (at(p), p.tx_errors as f64)).collect();
    let lines = [
        Line { label: "receive errors", colour: BAD, points: rx },
        Line { label: "send errors", colour: WARN, points: tx },
    ];
    let total: u64 = link.points.iter().map(|p| p.rx_errors + p.tx_errors).sum();
    let last = format!("{total} errors in the last hour");
    let title = format!("{}: errors per {interval} s", link.ifname);
    chart(title, draw(&lines, &whole, false, 1.0), last)
}

/// The round-trip time chart of `gateway` (no point where a probe had no answer).
pub(crate) fn gateway_rtt(gateway: &GatewaySeries, now: u64) -> Chart {
    let rtt = gateway
        .points
        .iter()
        .filter_map(|p| p.rtt_ms.map(|ms| (minutes(now, p.at_unix_ms), ms)))
        .collect();
    let lines = [Line { label: "round-trip time", colour: RX, points: rtt }];
    let last = gateway.points.last().map_or_else(String::new, |p| match p.rtt_ms {
        Some(ms) => format!("last {ms:.1} ms, {:.0}% loss", p.loss_percent),
        None => format!("last probe unanswered, {:.0}% loss", p.loss_percent),
    });
    let title = format!("gateway {} via {}: round-trip time", gateway.gateway, gateway.interface);
    chart(title, draw(&lines, &|v| format!("{v:.1} ms"), false, 1.0), last)
}

/// The loss chart of `gateway`.
pub(crate) fn gateway_loss(gateway: &GatewaySeries, now: u64) -> Chart {
    let loss =
        gateway.points.iter().map(|p| (minutes(now, p.at_unix_ms), p.loss_percent)).collect();
    let lines = [Line { label: "loss", colour: BAD, points: loss }];
    let title = format!("gateway {} via {}: loss", gateway.gateway, gateway.interface);
    chart(title, draw(&lines, &|v| format!("{v:.0} %"), false, 100.0), String::new())
}

/// The reconciles' durations, a dot each, coloured by the phase each left.
pub(crate) fn reconciles(points: &[ReconcilePoint], now: u64) -> Chart {
    let phases: [(&str, RGBColor); 4] =
        [("Healthy", TX), ("Drifted", WARN), ("RequiresAdoption", RX), ("Blocked", BAD)];
    let lines: Vec<Line<'_>> = phases
        .iter()
        .map(|(phase, colour)| Line {
            label: phase,
            colour: *colour,
            points: points
                .iter()
                .filter(|p| p.phase == *phase)
                .map(|p| (minutes(now, p.at_unix_ms), p.duration_ms as f64))
                .collect(),
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    let last = points.last().map_or_else(String::new, |p| {
        format!("{} reconciles, the last {} ms, {}", points.len(), p.duration_ms, p.phase)
    });
    let svg = draw(&lines, &|v| format!("{v:.0} ms"), true, 10.0);
    chart("reconciles: duration and phase".into(), svg, last)
}

/// The charts of the whole history, in page order.
pub(crate) fn all(view: &SeriesView) -> (Vec<Chart>, Vec<Chart>, Vec<Chart>) {
    let now = view.now_unix_ms;
    let interfaces = view
        .interfaces
        .iter()
        .flat_map(|l| [link_bits(l, now), link_errors(l, now, view.interval_seconds)])
        .collect();
    let gateways =
        view.gateways.iter().flat_map(|g| [gateway_rtt(g, now), gateway_loss(g, now)]).collect();
    (interfaces, gateways, vec![reconciles(&view.reconciles, now)])
}

/// The Overview's charts: the reconciles, each gateway's round-trip time, and the bit rates of
/// the [`OVERVIEW_LINKS`] interfaces that moved the most bits in the window.
pub(crate) fn overview(view: &SeriesView) -> Vec<Chart> {
    let now = view.now_unix_ms;
    let mut charts = vec![reconciles(&view.reconciles, now)];
    charts.extend(view.gateways.iter().map(|g| gateway_rtt(g, now)));
    let mut busiest: Vec<&LinkSeries> = view.interfaces.iter().collect();
    let moved = |l: &LinkSeries| l.points.iter().map(|p| p.rx_bps + p.tx_bps).sum::<f64>();
    busiest.sort_by(|a, b| moved(b).total_cmp(&moved(a)));
    charts.extend(busiest.into_iter().take(OVERVIEW_LINKS).map(|l| link_bits(l, now)));
    charts
}

/// Interfaces whose bit rate the Overview charts.
pub const OVERVIEW_LINKS: usize = 2;

/// The chart panel (what htmx swaps every sample interval).
#[derive(Template)]
#[template(path = "charts.html")]
pub(crate) struct ChartsPanel {
    /// `/interfaces/charts` or `/overview/charts`: where the panel reloads from.
    pub(crate) source: &'static str,
    /// Seconds between reloads.
    pub(crate) every: u64,
    /// Titled groups of charts.
    pub(crate) groups: Vec<(&'static str, Vec<Chart>)>,
}

#[derive(Template)]
#[template(path = "interfaces.html")]
struct InterfacesPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    panel: ChartsPanel,
}

fn interfaces_panel(view: &SeriesView) -> ChartsPanel {
    let (interfaces, gateways, reconciles) = all(view);
    ChartsPanel {
        source: "/interfaces/charts",
        every: view.interval_seconds.max(1),
        groups: vec![
            ("Interfaces", interfaces),
            ("Gateways", gateways),
            ("Reconciles", reconciles),
        ],
    }
}

/// The Overview's chart panel.
pub(crate) fn overview_panel(view: &SeriesView) -> ChartsPanel {
    ChartsPanel {
        source: "/overview/charts",
        every: view.interval_seconds.max(1),
        groups: vec![("Last hour", overview(view))],
    }
}

/// `GET /interfaces`: every chart.
pub(crate) async fn page<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
) -> Response {
    let page = InterfacesPage {
        assets: Links::get(),
        signed_in: true,
        csrf: session.csrf,
        panel: interfaces_panel(&app.backend.series()),
    };
    render(&page, StatusCode::OK)
}

/// `GET /interfaces/charts`: the Interfaces page's chart panel alone (htmx).
pub(crate) async fn interfaces_charts<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    _: SignedIn,
) -> Response {
    fragment(&interfaces_panel(&app.backend.series()))
}

/// `GET /overview/charts`: the Overview's chart panel alone (htmx).
pub(crate) async fn overview_charts<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    _: SignedIn,
) -> Response {
    fragment(&overview_panel(&app.backend.series()))
}

fn fragment(panel: &ChartsPanel) -> Response {
    match panel.render() {
        Ok(html) => Html(html).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(points: usize) -> LinkSeries {
        LinkSeries {
            ifname: "lan0".into(),
            points: (0..points)
                .map(|i| LinkPoint {
                    at_unix_ms: 3_600_000 - (points - i) as u64 * 10_000,
                    rx_bps: 1_000_000.0 * i as f64,
                    tx_bps: 1000.0,
                    rx_errors: 0,
                    tx_errors: 0,
                })
                .collect(),
        }
    }

    #[test]
    fn a_link_with_points_is_drawn_as_an_svg_line_with_scaled_labels() {
        let c = link_bits(&link(30), 3_600_000);
        assert!(c.empty.is_none());
        assert!(c.svg.starts_with("<svg role=\"img\""), "{}", &c.svg[..80]);
        assert!(c.svg.contains("<polyline"), "a line");
        assert!(c.svg.contains("Mbit/s"), "y labels scaled");
        assert!(!c.svg.contains("style="), "no style attribute the CSP would refuse");
        assert_eq!(c.last, "now 29 Mbit/s received, 1 kbit/s sent");
    }

    #[test]
    fn nothing_to_draw_says_so() {
        let c = link_bits(&link(0), 3_600_000);
        assert_eq!(c.empty, Some("No samples yet."));
        assert!(c.svg.is_empty());
    }

    #[test]
    fn units_scale() {
        assert_eq!(bits(830.0), "830 bit/s");
        assert_eq!(bits(1_250_000.0), "1.2 Mbit/s");
        assert_eq!(bits(3e9), "3 Gbit/s");
    }
}
