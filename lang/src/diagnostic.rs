//! Rendering of [`EvalError`]s through miette: the message with its stable
//! code, the source snippet with the primary label and any secondary places
//! of the same file ("first defined here"), a help line ("did you mean …?"),
//! then the bounded chain of "while evaluating …" contexts as compact notes
//! (innermost first, repeated frames collapsed, the middle elided).

use std::fmt;

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan};

use crate::error::{Context, ErrorKind, EvalError};
use crate::source::{Sources, Span};

#[derive(Debug)]
pub struct Report {
    message: String,
    code: &'static str,
    source: Option<NamedSource<String>>,
    labels: Vec<LabeledSpan>,
    help: Option<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Report {}

impl Diagnostic for Report {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h.clone()) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source.as_ref().map(|s| s as &dyn miette::SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.labels.is_empty() {
            None
        } else {
            Some(Box::new(self.labels.iter().cloned()))
        }
    }
}

/// A span limited to its first line, so a label never covers a whole block.
fn first_line(sources: &Sources, span: Span) -> SourceSpan {
    let file = sources.get(span.file);
    let text = &file.text;
    let mut start = (span.start as usize).min(text.len());
    let mut end = (span.end as usize).clamp(start, text.len());
    // miette draws no label at the very end of the text: point at the last
    // character instead (or just after the last line, before its newline).
    if start == end && start == text.len() && start > 0 {
        let last = text[..start].char_indices().next_back().map_or(0, |(i, _)| i);
        start = last;
        end = if text[last..].starts_with('\n') { last } else { text.len() };
    }
    let end = text[start..end].find('\n').map_or(end, |i| start + i);
    SourceSpan::new(start.into(), end - start)
}

/// Lines longer than this many bytes are not shown in snippets.
const MAX_SHOWN_LINE: usize = 400;

/// Whether `span` starts on a line too long to show.
fn on_long_line(sources: &Sources, span: Span) -> bool {
    let file = sources.get(span.file);
    let text = file.text.as_bytes();
    let at = (span.start as usize).min(text.len());
    let start = text[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let end = text[at..].iter().position(|&b| b == b'\n').map_or(text.len(), |i| at + i);
    end - start > MAX_SHOWN_LINE
}

fn context_line(sources: &Sources, c: &Context) -> String {
    let mut line = c.what.clone();
    if let Some(span) = c.span {
        line.push_str(&format!(" at {}", sources.describe(span)));
    }
    if c.repeat > 1 {
        line.push_str(&format!(" (repeated {} times)", c.repeat));
    }
    line
}

const ATTR_PREFIX: &str = "while evaluating the attribute '";

/// Folds runs of "while evaluating the attribute 'b'", "… 'a'" (innermost
/// first) into one "while evaluating the attribute 'a.b'".
fn merge_attribute_paths(contexts: &[Context]) -> Vec<Context> {
    let mut out: Vec<Context> = Vec::new();
    for c in contexts {
        let name = c.what.strip_prefix(ATTR_PREFIX).and_then(|r| r.strip_suffix('\''));
        if let (Some(name), Some(prev)) = (name, out.last_mut()) {
            if let Some(path) = prev.what.strip_prefix(ATTR_PREFIX).and_then(|r| r.strip_suffix('\'')) {
                if c.span.is_none() && prev.span.is_none() {
                    prev.what = format!("{ATTR_PREFIX}{name}.{path}'");
                    continue;
                }
            }
        }
        out.push(c.clone());
    }
    out
}

/// Where in the user's own files a stdlib error is about: the first
/// `FILE:LINE:COL` its message names (as `unsafeGetAttrPos` positions
/// print) of a file that is not the stdlib's. The stdlib's `throw` is
/// never what the user should look at.
fn user_place(err: &EvalError, sources: &Sources) -> Option<Span> {
    if err.kind != ErrorKind::Thrown || !err.message.starts_with("kdeploy: ") {
        return None;
    }
    err.message.split(|c: char| c.is_whitespace() || "()".contains(c)).find_map(|word| {
        let word = word.trim_end_matches(['.', ',', ';', ':']);
        let (rest, col) = word.rsplit_once(':')?;
        let (name, line) = rest.rsplit_once(':')?;
        if name.starts_with("<kdeploy>") {
            return None;
        }
        sources.word_at(name, line.parse().ok()?, col.parse().ok()?)
    })
}

/// A " Did you mean 'x'?" sentence of a message, as advice.
fn did_you_mean(message: &str) -> Option<String> {
    let at = message.find("Did you mean '")?;
    let end = message[at..].find('?')? + at + 1;
    Some(message[at..end].to_string())
}

/// Builds the miette report for an error.
pub fn report(err: &EvalError, sources: &Sources) -> Report {
    let mut message = err.message.clone();
    let mut labels = Vec::new();
    let mut source = None;
    let mut elsewhere = Vec::new();
    let mut help = err.help.clone();
    let moved;
    let err = match user_place(err, sources) {
        Some(place) => {
            if let Some(thrown) = err.span {
                elsewhere.push(format!("raised by {}", sources.describe(thrown)));
            }
            let (line, _) = sources.line_col(place);
            let fix = format!("change it in {} (line {line})", sources.get(place.file).name);
            help = Some(match (help, did_you_mean(&err.message)) {
                (Some(h), _) => format!("{h}; {fix}"),
                (None, Some(d)) => format!("{d} {}{}", fix[..1].to_uppercase(), &fix[1..]),
                (None, None) => format!("{}{}", fix[..1].to_uppercase(), &fix[1..]),
            });
            moved = EvalError { span: Some(place), label: Some("this definition".to_string()), ..err.clone() };
            &moved
        }
        None => err,
    };
    match err.span {
        Some(span) if on_long_line(sources, span) => {
            // No snippet: the line would fill the screen (and miette cannot
            // draw a label past column 65535).
            let what = err.label.as_deref().unwrap_or("here");
            elsewhere.push(format!("{what}: {} (the line is too long to show)", sources.describe(span)));
            for (what, note) in &err.notes {
                elsewhere.push(format!("{what}: {}", sources.describe(*note)));
            }
        }
        Some(span) => {
            let file = sources.get(span.file);
            source = Some(NamedSource::new(file.name.clone(), file.text.to_string()));
            labels.push(LabeledSpan::new_primary_with_span(err.label.clone(), first_line(sources, span)));
            for (what, note) in &err.notes {
                if note.file == span.file && !on_long_line(sources, *note) {
                    labels.push(LabeledSpan::new_with_span(Some(what.clone()), first_line(sources, *note)));
                } else {
                    elsewhere.push(format!("{what}: {}", sources.describe(*note)));
                }
            }
        }
        None => {
            for (what, note) in &err.notes {
                elsewhere.push(format!("{what}: {}", sources.describe(*note)));
            }
        }
    }
    let (inner, elided, outer) = err.contexts();
    let mut notes: Vec<String> = elsewhere;
    notes.extend(merge_attribute_paths(inner).iter().map(|c| context_line(sources, c)));
    if elided > 0 {
        notes.push(format!("… {elided} more"));
    }
    notes.extend(merge_attribute_paths(outer).iter().map(|c| context_line(sources, c)));
    for n in notes {
        message.push_str("\n  ↳ ");
        message.push_str(&n);
    }
    Report { message, code: err.kind.code(), source, labels, help }
}

/// Renders an error as text; without colour for logs and snapshot tests.
pub fn render(err: &EvalError, sources: &Sources, color: bool) -> String {
    let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100).with_wrap_lines(false);
    let mut out = String::new();
    let r = report(err, sources);
    if handler.render_report(&mut out, &r).is_err() {
        out = format!("error: {}", err.message);
    }
    out
}
