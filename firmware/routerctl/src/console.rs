//! The console's width and rows wrapped to it: routerctl never cuts a value with `…`; a long
//! cell goes on in continuation lines indented under its column (issue 34 §8). Pure text, apart
//! from [`width`], which asks the terminal and the environment. Does not print.

use std::io::IsTerminal;

/// The width when neither the terminal nor `$COLUMNS` tells one: a serial console's.
const DEFAULT_WIDTH: usize = 80;

/// The fewest columns a wrapped cell keeps: on a very narrow console continuation lines move
/// left of their column rather than holding a word or two each.
const MIN_ROOM: usize = 20;

/// The columns to fit: the terminal's width when stdout is a terminal, else `$COLUMNS` when set
/// to a positive number, else 80.
pub fn width() -> usize {
    let stdout = std::io::stdout();
    let terminal = if stdout.is_terminal() {
        terminal_size::terminal_size_of(&stdout).map(|(w, _)| w.0)
    } else {
        None
    };
    width_from(terminal, std::env::var("COLUMNS").ok().as_deref())
}

/// [`width`] from what was found: the terminal's columns (`None` when stdout is not a terminal
/// or it does not say) and the value of `$COLUMNS` (`None` when unset). Zero or garbage in
/// either counts as not told.
pub fn width_from(terminal: Option<u16>, columns: Option<&str>) -> usize {
    terminal
        .map(usize::from)
        .filter(|w| *w > 0)
        .or_else(|| columns.and_then(|c| c.trim().parse::<usize>().ok()).filter(|w| *w > 0))
        .unwrap_or(DEFAULT_WIDTH)
}

/// `prefix` (the row's earlier cells, already padded) then `text`, wrapped to `width` columns;
/// continuation lines start with `indent` spaces, under the column `text` starts in. Lines are
/// joined with `\n`, with none at the end; trailing blanks are dropped.
///
/// Words longer than a line are broken; newlines in `text` start new (indented) lines. When
/// `prefix` leaves too little room (fewer than [`MIN_ROOM`] columns), it gets lines of its own
/// and `text` starts on the next. Widths count characters (CJK and symbols above U+1100 as
/// two, textwrap's rule without Unicode tables), so a line never exceeds `width` characters.
pub fn wrap_row(prefix: &str, text: &str, indent: usize, width: usize) -> String {
    let indent = " ".repeat(indent.min(width.saturating_sub(MIN_ROOM)));
    let text = text.trim_end();
    if text.is_empty() {
        return fill(prefix.trim_end(), "", &indent, width);
    }
    if textwrap::core::display_width(prefix) + MIN_ROOM > width {
        let head = fill(prefix.trim_end(), "", &indent, width);
        return format!("{head}\n{}", fill(text, &indent, &indent, width));
    }
    fill(text, prefix, &indent, width)
}

/// textwrap's fill of `text` with the two indents; an empty `text` gives `first` trimmed.
fn fill(text: &str, first: &str, then: &str, width: usize) -> String {
    if text.is_empty() {
        return first.trim_end().to_string();
    }
    // Words break at spaces only: a name like `file-sha256:…` or `lan0-v4` stays whole
    // unless it is longer than a line.
    let options = textwrap::Options::new(width.max(1))
        .initial_indent(first)
        .subsequent_indent(then)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    let lines: Vec<String> =
        textwrap::wrap(text, options).iter().map(|l| l.trim_end().to_string()).collect();
    lines.join("\n")
}
