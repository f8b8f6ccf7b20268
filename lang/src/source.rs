//! Source files known to one evaluation: their names and texts, addressed by
//! [`FileId`], so that every [`Span`] in the IR and in errors can be rendered
//! back into `file:line:col` and a snippet.

use std::cell::{OnceCell, RefCell};
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
    /// Where each line starts and whether it is ASCII (columns are then
    /// byte differences), made on the first position asked for: `__curPos`
    /// may ask for many.
    lines: OnceCell<Vec<(u32, bool)>>,
}

impl SourceFile {
    /// 1-based line and column (in characters) of a byte offset.
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let text = &*self.text;
        let offset = offset.min(text.len());
        let lines = self.lines.get_or_init(|| {
            let mut lines = Vec::new();
            let mut start = 0;
            for l in text.split_inclusive('\n') {
                lines.push((start as u32, l.is_ascii()));
                start += l.len();
            }
            if text.is_empty() || text.ends_with('\n') {
                lines.push((start as u32, true));
            }
            lines
        });
        let line = lines.partition_point(|&(s, _)| s as usize <= offset).max(1);
        let (start, ascii) = lines[line - 1];
        let start = start as usize;
        let upto = match text.get(start..offset) {
            Some(l) if !ascii => l.chars().count(),
            _ => offset - start,
        };
        (line, upto + 1)
    }
}

/// All files parsed so far; shared by the evaluator and the error renderer.
#[derive(Default, Debug, Clone)]
pub struct Sources {
    files: Rc<RefCell<Vec<Rc<SourceFile>>>>,
}

impl Sources {
    pub fn add(&self, name: String, text: Rc<str>) -> FileId {
        let mut files = self.files.borrow_mut();
        files.push(Rc::new(SourceFile { name, text, lines: OnceCell::new() }));
        FileId((files.len() - 1) as u32)
    }

    pub fn get(&self, id: FileId) -> Rc<SourceFile> {
        self.files.borrow()[id.0 as usize].clone()
    }

    /// 1-based line and column of a byte offset, columns counted in characters.
    pub fn line_col(&self, span: Span) -> (usize, usize) {
        self.get(span.file).line_col(span.start as usize)
    }

    pub fn describe(&self, span: Span) -> String {
        let (line, col) = self.line_col(span);
        format!("{}:{}:{}", self.get(span.file).name, line, col)
    }

    /// The word (a name, or a quoted string) at a position as
    /// [`Sources::describe`] and `unsafeGetAttrPos` print it: the file
    /// shown as `name`, 1-based line, column in characters.
    pub fn word_at(&self, name: &str, line: usize, col: usize) -> Option<Span> {
        let files = self.files.borrow();
        let (i, file) = files.iter().enumerate().find(|(_, f)| f.name == name)?;
        let text = &*file.text;
        let line_start = text.split_inclusive('\n').take(line.checked_sub(1)?).map(str::len).sum::<usize>();
        let rest = text.get(line_start..)?;
        let start = line_start + rest.char_indices().nth(col.checked_sub(1)?)?.0;
        let word = &text[start..];
        let len = if let Some(quoted) = word.strip_prefix('"') {
            quoted.find('"').map_or(1, |n| n + 2)
        } else {
            word.find(|c: char| !(c.is_alphanumeric() || "_-'".contains(c))).unwrap_or(word.len()).max(1)
        };
        Some(Span { file: FileId(i as u32), start: start as u32, end: (start + len).min(text.len()) as u32 })
    }
}
