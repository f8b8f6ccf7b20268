//! Rendering of [`EvalError`]s through miette: `file:line:col`, the source
//! snippet with a label, a help line ("did you mean …?"), and the bounded
//! chain of "while evaluating …" contexts, each with its own snippet when
//! it has a place.

use std::fmt;

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan};

use crate::error::EvalError;
use crate::source::{Sources, Span};

#[derive(Debug)]
pub struct Report {
    message: String,
    code: Option<&'static str>,
    source: Option<NamedSource<String>>,
    labels: Vec<LabeledSpan>,
    help: Option<String>,
    related: Vec<Report>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Report {}

impl Diagnostic for Report {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.code.map(|c| Box::new(c) as Box<dyn fmt::Display>)
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
    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        if self.related.is_empty() {
            None
        } else {
            Some(Box::new(self.related.iter().map(|r| r as &dyn Diagnostic)))
        }
    }
}

fn located(sources: &Sources, message: String, span: Option<Span>, label: Option<String>) -> Report {
    let (source, labels, message) = match span {
        Some(span) => {
            let file = sources.get(span.file);
            let len = (span.end - span.start) as usize;
            let text = file.text.to_string();
            let start = (span.start as usize).min(text.len());
            let src = NamedSource::new(file.name.clone(), text);
            let l = LabeledSpan::new_with_span(label, SourceSpan::new(start.into(), len));
            (Some(src), vec![l], format!("{message}\n  at {}", sources.describe(span)))
        }
        None => (None, vec![], message),
    };
    Report { message, code: None, source, labels, help: None, related: vec![] }
}

/// Builds the miette report for an error.
pub fn report(err: &EvalError, sources: &Sources) -> Report {
    let mut r = located(sources, err.message.clone(), err.span, err.label.clone());
    r.code = Some(err.kind.code());
    r.help = err.help.clone();
    let mut plain = Vec::new();
    for (what, span) in &err.context {
        match span {
            Some(_) => r.related.push(located(sources, what.clone(), *span, None)),
            None => plain.push(what.clone()),
        }
    }
    if err.context_elided > 0 {
        plain.push(format!("… and {} more", err.context_elided));
    }
    if !plain.is_empty() {
        r.related.push(Report { message: plain.join("\n"), code: None, source: None, labels: vec![], help: None, related: vec![] });
    }
    r
}

/// Renders an error as text; without colour for logs and snapshot tests.
pub fn render(err: &EvalError, sources: &Sources, color: bool) -> String {
    let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
    let mut out = String::new();
    let r = report(err, sources);
    if handler.render_report(&mut out, &r).is_err() {
        out = format!("error: {}", err.message);
    }
    out
}
