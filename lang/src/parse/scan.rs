//! The scan before parsing: one pass over rnix's tokens that bounds how
//! deeply the text nests ([`MAX_NESTING`]) and what tokenizing it costs.
//!
//! Nesting is estimated from tokens alone, as an upper bound of the syntax
//! tree's depth: each bracket, string and interpolation opens a level, and
//! inside a level each operator, `=`, `:`, `or`, `if`, `with`, `assert`,
//! `let` and each function argument goes one deeper (a chain `1 + 1 + …` is
//! a tree as deep as it is long, and so is evaluating it). A level's count
//! starts again after each `;` of a set or `let` and each `,` of a pattern,
//! and at each element of a list, since those are siblings, not children.
//!
//! rnix's tokenizer reads, at the start of each token outside strings, the
//! whole run of name and path characters ahead of it to decide whether a
//! path starts there. The scan adds up those runs before rnix reads them
//! and stops once they pass [`READ_PER_BYTE`] times the text's length.

use rnix::{SyntaxKind, SyntaxKind::*, TextRange, TextSize};

/// How deeply an expression may nest, counted as above.
pub const MAX_NESTING: usize = 500;

/// What tokenizing may cost, in bytes read per byte of text (plus
/// [`READ_BASE`]); the stdlib costs less than 4.
const READ_PER_BYTE: usize = 32;
const READ_BASE: usize = 16 << 20;

/// Why a text is not parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It nests deeper than [`MAX_NESTING`]; `at` is where it went past.
    TooDeep { at: TextRange },
    /// A run of characters without a space would take too long to read.
    LongRun { at: TextRange },
}

/// What the scan learned of a text it accepts.
#[derive(Debug)]
pub struct Scanned {
    /// The deepest nesting (the tests compare it with rnix's tree), and
    /// the first token at that depth.
    #[cfg_attr(not(test), allow(dead_code))]
    pub depth: usize,
    pub deepest: TextRange,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Root,
    Paren,
    List,
    Set,
    Let,
    Inherit,
    Str,
    Interpolation,
}

/// One open level: its kind, the depth it opened at, and how much deeper
/// the current position inside it is.
struct Level {
    frame: Frame,
    base: usize,
    run: usize,
}

struct Scan {
    levels: Vec<Level>,
    /// The last significant token ended an operand, so an operand now
    /// is a function argument (or, in a list, the next element).
    after_operand: bool,
    depth: usize,
    deepest: TextRange,
}

pub fn scan(text: &str) -> Result<Scanned, Refusal> {
    let mut s = Scan {
        levels: vec![Level { frame: Frame::Root, base: 0, run: 0 }],
        after_operand: false,
        depth: 0,
        deepest: TextRange::empty(TextSize::from(0)),
    };
    let mut reading = Reading::new(text);
    let mut offset = 0;
    let mut tokens = rnix::tokenize(text);
    loop {
        if !s.in_string() {
            reading.charge(offset)?;
        }
        let Some((kind, token)) = tokens.next() else { break };
        let at = range(offset, offset + token.len());
        offset += token.len();
        s.token(kind, at)?;
    }
    Ok(Scanned { depth: s.depth, deepest: s.deepest })
}

fn range(start: usize, end: usize) -> TextRange {
    let size = |n: usize| TextSize::from(u32::try_from(n).unwrap_or(u32::MAX));
    TextRange::new(size(start), size(end))
}

impl Scan {
    fn top(&mut self) -> &mut Level {
        self.levels.last_mut().expect("the root level is never closed")
    }

    fn in_string(&self) -> bool {
        self.levels.last().is_some_and(|l| l.frame == Frame::Str)
    }

    fn current(&self) -> usize {
        self.levels.last().map_or(0, |l| l.base + l.run)
    }

    fn token(&mut self, kind: SyntaxKind, at: TextRange) -> Result<(), Refusal> {
        match kind {
            TOKEN_WHITESPACE | TOKEN_COMMENT | TOKEN_STRING_CONTENT => return Ok(()),
            TOKEN_L_PAREN => self.open(Frame::Paren, 1, at)?,
            TOKEN_L_BRACK => self.open(Frame::List, 1, at)?,
            TOKEN_L_BRACE => self.open(Frame::Set, 2, at)?,
            TOKEN_STRING_START => self.open(Frame::Str, 1, at)?,
            TOKEN_INTERPOL_START => self.open(Frame::Interpolation, 2, at)?,
            TOKEN_LET => self.open(Frame::Let, 1, at)?,
            TOKEN_INHERIT => self.open(Frame::Inherit, 1, at)?,
            TOKEN_R_PAREN => self.close(Frame::Paren),
            TOKEN_R_BRACK => self.close(Frame::List),
            TOKEN_R_BRACE => self.close(Frame::Set),
            TOKEN_STRING_END => self.close(Frame::Str),
            TOKEN_INTERPOL_END => self.close(Frame::Interpolation),
            TOKEN_IN => {
                if self.top().frame == Frame::Let {
                    self.levels.pop();
                }
                self.deeper(at)?;
            }
            TOKEN_SEMICOLON => {
                if self.top().frame == Frame::Inherit {
                    self.levels.pop();
                }
                if matches!(self.top().frame, Frame::Set | Frame::Let) {
                    self.top().run = 0;
                }
            }
            TOKEN_COMMA => {
                if self.top().frame == Frame::Set {
                    self.top().run = 0;
                }
            }
            TOKEN_IDENT | TOKEN_INTEGER | TOKEN_FLOAT | TOKEN_PATH_ABS | TOKEN_PATH_REL | TOKEN_PATH_HOME
            | TOKEN_PATH_SEARCH | TOKEN_URI | TOKEN_CUR_POS => {
                self.operand(at)?;
                self.after_operand = true;
                return Ok(());
            }
            // `rec` is an operand; its `{` is not another.
            TOKEN_REC => self.operand(at)?,
            TOKEN_DOT | TOKEN_THEN | TOKEN_ELSE | TOKEN_ELLIPSIS | TOKEN_AT | TOKEN_ERROR => {}
            // Operators, `=`, `:`, `?`, `or`, `if`, `with`, `assert`.
            _ => self.deeper(at)?,
        }
        self.after_operand = matches!(kind, TOKEN_R_PAREN | TOKEN_R_BRACK | TOKEN_R_BRACE | TOKEN_STRING_END);
        Ok(())
    }

    /// An operand right after another is an argument, except in a list or
    /// an `inherit`, where it is a sibling.
    fn operand(&mut self, at: TextRange) -> Result<(), Refusal> {
        if !self.after_operand {
            return Ok(());
        }
        match self.top().frame {
            Frame::List | Frame::Inherit => {
                self.top().run = 0;
                Ok(())
            }
            _ => self.deeper(at),
        }
    }

    fn open(&mut self, frame: Frame, by: usize, at: TextRange) -> Result<(), Refusal> {
        if matches!(frame, Frame::Paren | Frame::List | Frame::Set | Frame::Str) {
            self.operand(at)?;
        }
        let base = self.current() + by;
        self.levels.push(Level { frame, base, run: 0 });
        self.reached(at)
    }

    /// Closes the innermost level of this kind and what is open inside it;
    /// a closer with no opener (a syntax error rnix reports) closes nothing.
    fn close(&mut self, frame: Frame) {
        if let Some(i) = self.levels.iter().rposition(|l| l.frame == frame) {
            self.levels.truncate(i.max(1));
        }
    }

    fn deeper(&mut self, at: TextRange) -> Result<(), Refusal> {
        self.top().run += 1;
        self.reached(at)
    }

    fn reached(&mut self, at: TextRange) -> Result<(), Refusal> {
        let d = self.current();
        if d > MAX_NESTING {
            return Err(Refusal::TooDeep { at });
        }
        if d > self.depth {
            self.depth = d;
            self.deepest = at;
        }
        Ok(())
    }
}

/// The bytes rnix's tokenizer reads ahead, for the path check at the start
/// of each token: the run of name and path characters from there.
struct Reading<'t> {
    text: &'t [u8],
    budget: usize,
    spent: usize,
    run_start: usize,
    run_end: usize,
}

impl<'t> Reading<'t> {
    fn new(text: &'t str) -> Self {
        let budget = text.len().saturating_mul(READ_PER_BYTE).saturating_add(READ_BASE);
        Reading { text: text.as_bytes(), budget, spent: 0, run_start: 0, run_end: 0 }
    }

    fn charge(&mut self, at: usize) -> Result<(), Refusal> {
        if at >= self.run_end {
            self.run_start = at;
            self.run_end = at + self.text[at..].iter().take_while(|&&b| in_run(b)).count();
        }
        self.spent += self.run_end - at;
        if self.spent > self.budget {
            return Err(Refusal::LongRun { at: range(self.run_start, self.run_end) });
        }
        Ok(())
    }
}

/// rnix's path characters, and `<` of a search path.
fn in_run(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'.' | b'+' | b'-' | b'<')
}
