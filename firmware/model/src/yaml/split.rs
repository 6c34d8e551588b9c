//! Parsing a long item list in two halves, on two threads.
//!
//! The `router.yaml` of a large router is mostly its `spec.resources` list, and a YAML parser
//! reads one character after another. When the list is long, [`find`] cuts the text between
//! two of its items by looking at lines only: the list is the block sequence under the first
//! `resources:` key line, its entries are the lines with a `-` at the first entry's column, and
//! it ends at the first line (not blank, not a comment) indented less than that, or as much but
//! not an entry. The *middle*, from an entry near the list's halfway point to the list's end,
//! is parsed on a second thread as a document of its own, whose root is that block sequence;
//! the *head*, everything else (the text before the middle and the text after it, joined), is
//! parsed on this one with the streamed path as usual.
//!
//! The cut is a guess. [`parse`] keeps the result only if both parses show the guess was
//! right, and returns `None` otherwise, so that the caller parses the whole text in one go (and
//! reports problems exactly as it always does):
//!
//! - both parses are clean: no syntax error, no problem, one document each;
//! - neither holds an anchor or an alias (the halves cannot see each other's anchors), and
//!   the text has no directive line (`%TAG` would give the middle's tags another meaning);
//! - in the head, the streamed sequence starts at the entries' column, has exactly as many
//!   items as entries were counted before the cut, the last node inside it ends before the cut
//!   and its end comes at or after the cut: the cut lies between two items of that very
//!   sequence, and nothing of the items before it runs past it;
//! - in the middle, the root is a block sequence starting at the entries' column on the first
//!   line.
//!
//! Together these mean that the whole text reads as the head up to the cut, then the middle's
//! items (further entries of the same sequence, in the same block context), then the rest of
//! the head: block structure is decided by indentation, a line indented less than the entries
//! ends every block node inside them, and the only nodes that could run on past such a line, a
//! quoted scalar or a flow collection, would be unterminated in the middle's own parse.

use std::cell::OnceCell;

use serde_json::Value;

use super::{Base, Built, ItemSink, Positions, SourceMap, build};
use crate::error::Location;

/// Smallest middle worth a second thread: below it, the thread costs about what it saves
/// (saphyr reads some 30 MB/s here, so this is a couple of milliseconds of parsing).
const MIN_MIDDLE: usize = 64 * 1024;

/// Where [`find`] cuts the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Cut {
    /// Byte offset where the middle starts: the start of an entry line.
    start: usize,
    /// Byte offset where the middle ends: the start of the first line after the list, or the
    /// end of the text.
    end: usize,
    /// Column (0-based) of the entries' `-`.
    indent: usize,
    /// Line number (1-based) of the first entry.
    first_line: usize,
    /// Column (0-based) of the first character of the line at `end` (0 at the end of the text).
    end_indent: usize,
    /// Entries before `start`.
    before: usize,
    /// Line number (1-based) of `start`.
    line: usize,
    /// Line breaks in the middle: how far the head's lines after the cut are from their
    /// place in the whole text.
    lines: usize,
}

/// Where to cut `source` to parse the list at `items_path` in two halves, if the list is long
/// enough to be worth it and its lines look like a block sequence (see the module docs).
pub(super) fn find(source: &str, items_path: &str) -> Option<Cut> {
    find_with(source, items_path, MIN_MIDDLE)
}

fn find_with(source: &str, items_path: &str, min_middle: usize) -> Option<Cut> {
    if source.len() < 2 * min_middle {
        return None;
    }
    let list = scan(source, items_path)?;
    let first = list.entries.first()?.0;
    let half = first + (list.end - first) / 2;
    let before = list.entries.partition_point(|(at, _)| *at < half).max(1);
    let cut = list.cut(before)?;
    (cut.end - cut.start >= min_middle).then_some(cut)
}

/// The list's lines as [`scan`] finds them.
struct List {
    /// Entry lines: byte offset and line breaks before it.
    entries: Vec<(usize, usize)>,
    /// Column of the entries' `-`.
    indent: usize,
    /// Byte offset of the end of the list, line breaks before it and its line's indentation.
    end: usize,
    end_breaks: usize,
    end_indent: usize,
}

impl List {
    /// The cut before entry `before` (at least one entry stays in the head).
    fn cut(&self, before: usize) -> Option<Cut> {
        let &(start, start_breaks) = self.entries.get(before).filter(|_| before > 0)?;
        Some(Cut {
            start,
            end: self.end,
            indent: self.indent,
            first_line: self.entries.first()?.1 + 1,
            end_indent: self.end_indent,
            before,
            line: start_breaks + 1,
            lines: self.end_breaks - start_breaks,
        })
    }
}

/// Finds the list's entry lines (see the module docs); `None` if the text has a directive
/// line or no `key:` line followed by an entry.
fn scan(source: &str, items_path: &str) -> Option<List> {
    let key = items_path.rsplit('.').next().filter(|k| !k.is_empty() && !k.contains('['))?;
    let mut entries: Vec<(usize, usize)> = Vec::new();
    let mut indent = None;
    let mut after_key = false;
    let (mut offset, mut breaks) = (0, 0);
    let mut end = None;
    for raw in source.split_inclusive('\n') {
        let here = (offset, breaks);
        offset += raw.len();
        breaks += usize::from(raw.ends_with('\n'));
        let text = raw.trim_end_matches(['\n', '\r']);
        if text.starts_with('%') {
            return None; // a directive (or text that looks like one): parse in one go
        }
        let spaces = text.len() - text.trim_start_matches(' ').len();
        let rest = &text[spaces..];
        if rest.trim_start_matches([' ', '\t']).is_empty() || rest.starts_with('#') {
            continue;
        }
        match indent {
            None if after_key => {
                if !is_entry(rest) {
                    return None;
                }
                indent = Some(spaces);
                entries.push(here);
            }
            None => after_key = is_key_line(rest, key),
            Some(i) if spaces == i && is_entry(rest) => entries.push(here),
            Some(i) if spaces <= i => {
                end = Some((here.0, here.1, spaces));
                break;
            }
            Some(_) => {}
        }
    }
    let (end, end_breaks, end_indent) = end.unwrap_or((source.len(), breaks, 0));
    Some(List { entries, indent: indent?, end, end_breaks, end_indent })
}

/// `rest` (a line after its indentation) is a block sequence entry: `-` then a space, a tab
/// or the end of the line.
fn is_entry(rest: &str) -> bool {
    rest.strip_prefix('-').is_some_and(|after| after.is_empty() || after.starts_with([' ', '\t']))
}

/// `rest` is `key:` with nothing after it but blanks or a comment.
fn is_key_line(rest: &str, key: &str) -> bool {
    let Some(after) = rest.strip_prefix(key).and_then(|r| r.strip_prefix(':')) else {
        return false;
    };
    let value = after.trim_start_matches([' ', '\t']);
    value.is_empty() || (value.starts_with('#') && value.len() < after.len())
}

/// Parses `source` cut at `cut`, the middle on a second thread (see the module docs).
///
/// Returns the whole document (with `null` for every streamed item, as [`super::parse`]),
/// its source map and the two sinks, the head's first; `None` if the cut turned out wrong, the
/// text has a problem, no second CPU is there, or no thread could be started: the caller then
/// parses the whole text in one go.
pub(super) fn parse<'s, S: ItemSink>(
    source: &'s str,
    items_path: &str,
    cut: &Cut,
    new_sink: &mut impl FnMut() -> S,
) -> Option<(Value, SourceMap<'s>, Vec<S>)> {
    if std::thread::available_parallelism().map_or(true, |n| n.get() < 2) {
        return None;
    }
    let middle = source.get(cut.start..cut.end)?;
    let mut head = String::with_capacity(source.len() - middle.len());
    head.push_str(source.get(..cut.start)?);
    head.push_str(source.get(cut.end..)?);
    let (mut first, mut second) = (new_sink(), new_sink());
    let line = u32::try_from(cut.line.saturating_sub(1)).ok()?;
    // The middle's root, the list itself, sits inside one mapping per segment of the path.
    let depth = if items_path.is_empty() { 0 } else { items_path.split('.').count() };
    let base = Base { index: cut.before, line, depth };
    let (head_built, middle_built) = std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("yaml-middle".into())
            .spawn_scoped(scope, || build(middle, false, Some(("", &mut second)), base))
            .ok()?;
        let head_built = build(&head, false, Some((items_path, &mut first)), Base::default());
        let middle_built = worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Some((head_built, middle_built))
    })?;
    let (head_built, middle_built) = (head_built.ok()?, middle_built.ok()?);
    if !fits(cut, &head_built, &middle_built) {
        return None;
    }
    let mut value = head_built.document?;
    let pointer = if items_path.is_empty() {
        String::new()
    } else {
        format!("/{}", items_path.replace('.', "/"))
    };
    if let Some(Value::Array(items)) = value.pointer_mut(&pointer) {
        items.resize(items.len() + middle_built.marks.items, Value::Null);
    }
    let middle_positions = &middle_built.positions;
    debug_assert!(
        middle_positions.values.keys().all(String::is_empty) && middle_positions.keys.is_empty(),
        "the middle records no position below its root"
    );
    let shallow = shifted(cut, head_built.positions)?;
    Some((value, SourceMap { source, shallow, full: OnceCell::new() }, vec![first, second]))
}

/// The checks of the module docs, on the two parses.
fn fits(cut: &Cut, head: &Built, middle: &Built) -> bool {
    let clean = |b: &Built| {
        b.problems.is_empty() && !b.unlocated && b.extra.is_none() && b.document.is_some()
    };
    // saphyr puts a block sequence's start at its first `-`, or at its first item when the
    // sequence is compact (as indented as its key): on the line of the first entry either way.
    let starts = |at: Location, line: usize| {
        usize::try_from(at.line).is_ok_and(|l| l == line)
            && usize::try_from(at.column).is_ok_and(|c| c > cut.indent)
    };
    let (h, m) = (&head.marks, &middle.marks);
    clean(head)
        && clean(middle)
        && !h.anchored
        && !m.anchored
        && h.start.is_some_and(|at| starts(at, cut.first_line))
        && h.items == cut.before
        // A block scalar before the cut ends where the next token starts: after the blanks
        // that begin the head's line at the cut, never past them.
        && h.content_end.is_some_and(|end| end <= (cut.line, cut.end_indent))
        && h.end.is_some_and(|end| end >= (cut.line, 0))
        && m.start.is_some_and(|at| starts(at, 1))
        && m.items > 0
        && matches!(&middle.document, Some(Value::Array(items)) if items.len() == m.items)
}

/// The head's positions with the lines after the cut moved down past the middle: the whole
/// text's shallow positions. The middle records none but its root's: its root is the streamed
/// list, whose items hand their starts to the sink instead (see `Builder::child_ctx`).
fn shifted(cut: &Cut, head: Positions) -> Option<Positions> {
    let lines = u32::try_from(cut.lines).ok()?;
    let cut_line = u32::try_from(cut.line).ok()?;
    let mut shifted = head;
    for at in shifted.values.values_mut().chain(shifted.keys.values_mut()) {
        if at.line >= cut_line {
            at.line += lines;
        }
    }
    Some(shifted)
}

#[cfg(test)]
mod tests;
