//! Source files known to one evaluation: their names and texts, addressed by
//! [`FileId`], so that every [`Span`] in the IR and in errors can be rendered
//! back into `file:line:col` and a snippet.

use std::cell::RefCell;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, range: rnix::TextRange) -> Span {
        Span { file, start: range.start().into(), end: range.end().into() }
    }
}

#[derive(Debug)]
pub struct SourceFile {
    /// The name shown to users: a path relative to the working directory,
    /// `<kdeploy>/…` for stdlib files, or `«expr»` for `--expr`.
    pub name: String,
    pub text: Rc<str>,
}

/// All files parsed so far; shared by the evaluator and the error renderer.
#[derive(Default, Debug, Clone)]
pub struct Sources {
    files: Rc<RefCell<Vec<Rc<SourceFile>>>>,
}

impl Sources {
    pub fn add(&self, name: String, text: Rc<str>) -> FileId {
        let mut files = self.files.borrow_mut();
        files.push(Rc::new(SourceFile { name, text }));
        FileId((files.len() - 1) as u32)
    }

    pub fn get(&self, id: FileId) -> Rc<SourceFile> {
        self.files.borrow()[id.0 as usize].clone()
    }

    /// 1-based line and column of a byte offset, columns counted in characters.
    pub fn line_col(&self, span: Span) -> (usize, usize) {
        let file = self.get(span.file);
        let upto = &file.text[..(span.start as usize).min(file.text.len())];
        let line = upto.matches('\n').count() + 1;
        let col = upto.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    pub fn describe(&self, span: Span) -> String {
        let (line, col) = self.line_col(span);
        format!("{}:{}:{}", self.get(span.file).name, line, col)
    }
}
