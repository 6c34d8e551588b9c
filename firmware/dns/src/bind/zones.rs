//! A server's `zones.conf`: the `zone` clauses routerd declares, one marked section per
//! `bind.zone` artifact, in zone name order. named reads it through the `include` at the end
//! of the server's `named.conf`; zones declared anywhere else are not routerd's and not listed.
//!
//! ```text
//! # routerd zone lab.example.
//! zone "lab.example" { type primary; file "/var/lib/routerd/dns/auth/lab.example.zone"; };
//! # routerd end
//! ```

use std::collections::BTreeMap;

use routerd_host::file::Markers;

const HEADER: &str = "# routerd's zones of this server. Every section belongs to a DNSZone of \
router.yaml;\n# routerd rewrites this file on every change: edit router.yaml, not this file.\n";
const MARKERS: Markers = Markers { begin: "# routerd zone ", end: "# routerd end" };

/// The sections of a `zones.conf`, by zone (`lab.example.`): each its clause's lines. Lines
/// outside sections are dropped at the next write.
pub(crate) fn parse(text: &str) -> BTreeMap<String, Vec<String>> {
    MARKERS.parse(text).into_iter().collect()
}

/// The whole file, sections in zone name order.
pub(crate) fn format(sections: &BTreeMap<String, Vec<String>>) -> String {
    let mut s = String::from(HEADER);
    for (zone, lines) in sections {
        MARKERS.push(&mut s, zone, lines);
    }
    s
}

/// The lines a clause is stored as; `None` when it would not read back as the same text (it
/// does not end with exactly one line break, has a carriage return, or a line that is a
/// section marker), which would show as drift forever.
pub(crate) fn clause_lines(clause: &str) -> Option<Vec<String>> {
    let lines: Vec<String> = clause.lines().map(str::to_owned).collect();
    let fits = !lines.is_empty() && lines.iter().all(|l| MARKERS.fits(l) && !l.contains('\r'));
    (fits && clause_text(&lines) == clause).then_some(lines)
}

/// The clause text of a section's lines: each line ended by a line break.
pub(crate) fn clause_text(lines: &[String]) -> String {
    lines.iter().flat_map(|l| [l.as_str(), "\n"]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_round_trip_in_zone_order() {
        let mut s = BTreeMap::new();
        let b = "zone \"b.example\" {\n\ttype primary;\n\tfile \"/d/b.example.zone\";\n};\n";
        let a = "zone \"a.example\" { type primary; file \"/d/a.example.zone\"; };\n";
        s.insert("b.example.".to_owned(), clause_lines(b).expect("fits"));
        s.insert("a.example.".to_owned(), clause_lines(a).expect("fits"));
        let text = format(&s);
        assert!(text.starts_with("# routerd's zones"));
        let at = |z: &str| text.find(&format!("# routerd zone {z}")).unwrap_or(usize::MAX);
        assert!(at("a.example.") < at("b.example."), "{text}");
        let back = parse(&text);
        assert_eq!(back, s);
        assert_eq!(clause_text(&back["b.example."]), b);
    }

    #[test]
    fn clauses_that_would_not_read_back_the_same_are_refused() {
        for bad in [
            "",
            "zone \"a\" { };",
            "zone \"a\" {\r\n};\n",
            "# routerd end\n",
            "# routerd zone x.\n",
        ] {
            assert_eq!(clause_lines(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn hand_written_lines_outside_sections_are_not_listed() {
        let text = "zone \"hand.example\" { type primary; file \"h\"; };\n\
                    # routerd zone lab.example.\nzone \"lab.example\" { };\n# routerd end\n";
        let parsed = parse(text);
        assert_eq!(parsed.keys().collect::<Vec<_>>(), ["lab.example."]);
    }
}
