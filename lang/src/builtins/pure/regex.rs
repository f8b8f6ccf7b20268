//! POSIX extended regular expressions as Nix 2.8 evaluates them for
//! `builtins.match` and `builtins.split`. Nix hands the pattern to
//! libstdc++'s `std::regex` with the `extended` flag, so this module parses
//! the pattern with that dialect's exact grammar (including its errors and
//! its automaton size limit), then matches it in two ways: a re-creation of
//! libstdc++'s backtracking executor (same automaton shape, same search
//! order, same quirks), and, when that exceeds a step budget, linear-time
//! `regex-automata` engines running a translation of the pattern.
//!
//! Semantics reproduced (each checked against Nix 2.8, also by comparing
//! thousands of random patterns and strings):
//! - matching is per byte, as `std::regex` over `char` is: `.` matches one
//!   byte of a multi-byte UTF-8 character, `é+` repeats only the last byte;
//! - character classes are those of the "C" locale (ASCII only), class names
//!   are case-insensitive and include libstdc++'s extra `d`, `w`, `s`;
//!   `[. .]` and `[= =]` take the POSIX character names (`[[.hyphen.]]`);
//! - escaping an ordinary character (`\n`, `\d`, `\]`, `\}`, `\-`) is an
//!   error, there are no back-references, and inside brackets `\` is literal;
//! - `.` matches anything but NUL (so it matches newline);
//! - `^`/`$` only match at the very start/end of the string;
//! - match selection: leftmost start; alternatives are all tried and the
//!   longest wins, but a greedy loop that reached any match is never retried
//!   with fewer iterations (`split "a?(ab)?" "ab"` matches `a`, not `ab`);
//! - a loop whose body can match empty runs one extra empty iteration that
//!   overwrites its groups (`match "(a*)*" "aa"` is `[""]`);
//! - `split` steps like `std::sregex_iterator`, so it reports the empty
//!   match right after a non-empty one (`split "a*" "baaac"` has an empty
//!   match between `aaa` and `c`).
//!
//! Known differences from Nix 2.8:
//! - when one search needs more than [`STEP_BUDGET`] backtracking steps
//!   (exponential patterns, on which Nix itself can run for minutes, or
//!   inputs of several hundred kilobytes), the automata answer instead: same
//!   leftmost start and the truly longest match, groups from the first path
//!   in backtracking order; the two libstdc++ quirks above are then absent
//!   (see the `budget_fallback` test);
//! - results are Rust strings: a group that ends inside a multi-byte
//!   character (`match "(.).*" "é"`) is converted lossily (U+FFFD), where
//!   Nix returns the raw byte.

use regex_automata::{hybrid, meta, util::syntax, Anchored, Input, MatchKind};

/// One element of a `builtins.split` result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitPart {
    /// Text between matches.
    Text(String),
    /// The capture groups of one match (`None` for a group that did not
    /// take part, which Nix shows as `null`).
    Groups(Vec<Option<String>>),
}

/// A compiled Nix regular expression. Compiling is the costly part, so the
/// caller may keep these around keyed by the pattern string.
#[derive(Debug)]
pub struct NixRegex {
    pattern: String,
    /// The automaton libstdc++ would build, for its exact search order.
    program: Program,
    // The rest are the linear-time fallback for searches that exceed the
    // executor's step budget.
    /// Leftmost-first engine over the whole haystack, used only to find
    /// where the leftmost match starts.
    search: meta::Regex,
    /// Lazy DFA with `MatchKind::All`: an anchored forward search with it
    /// ends at the longest possible match.
    longest: hybrid::dfa::DFA,
    /// `(?:P)\z`, run on the haystack cut at the chosen match end, to get the
    /// groups of the first path that ends exactly there.
    groups_at_end: meta::Regex,
    /// Same for a match ending before the end of the string: a `$` in the
    /// pattern must not match at the cut. `None` when the pattern has no `$`
    /// (then `groups_at_end` serves both).
    groups_mid: Option<meta::Regex>,
}

// ---------------------------------------------------------------------------
// Parsing (libstdc++'s POSIX "extended" grammar)
// ---------------------------------------------------------------------------

type ByteSet = [bool; 256];

#[derive(Debug, Clone)]
enum Node {
    Byte(u8),
    Set(Box<ByteSet>),
    /// `.`: any byte except NUL, as in libstdc++'s POSIX mode.
    Any,
    Start,
    End,
    /// A capture group and its number (1-based, in order of `(`).
    Group(Box<Node>, usize),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u64,
        max: Option<u64>,
        kind: Quant,
    },
}

/// How a repetition was written; libstdc++ builds a different number of
/// automaton states for each, which decides when it gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quant {
    Star,
    Plus,
    Opt,
    Interval,
}

/// Characters with a meaning in libstdc++'s extended syntax. `]` and `}`
/// are not among them: alone they are ordinary, and escaping them is an
/// error just like escaping a letter.
const SPECIAL: &[u8] = b".[\\()*+?{|^$";

/// libstdc++ refuses to build an automaton of more than this many states
/// (`_GLIBCXX_REGEX_STATE_LIMIT`), and Nix then reports "memory limit
/// exceeded". Reproducing the count also keeps `x{1000000}` from making us
/// build a huge automaton.
const STATE_LIMIT: u64 = 100_000;

/// Height limit of the parsed pattern (a group adds 2, a group around an
/// alternation 3, a quantifier 1: about 64 nested groups or 127 stacked
/// quantifiers). The
/// parser, the translation and `regex-automata`'s compiler all recurse over
/// the pattern; at this height they stay within a 2 MiB thread stack even
/// in debug builds. libstdc++ accepts much deeper patterns (up to its state
/// limit, about 33000 nested groups), which nobody writes.
pub const MAX_NESTING: usize = 128;

struct Parser<'a> {
    p: &'a [u8],
    i: usize,
    has_end_anchor: bool,
    groups: usize,
    /// Parentheses currently open.
    depth: usize,
}

fn err(detail: &str) -> String {
    detail.to_string()
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.p.get(self.i).copied()
    }

    /// Each parse function also returns the height of the tree it built,
    /// so that nesting can be bounded (see [`MAX_NESTING`]).
    fn disjunction(&mut self) -> Result<(Node, usize), String> {
        let (first, mut height) = self.alternative()?;
        let mut alts = vec![first];
        while self.peek() == Some(b'|') {
            self.i += 1;
            let (n, h) = self.alternative()?;
            alts.push(n);
            height = height.max(h);
        }
        Ok(if alts.len() == 1 {
            (alts.pop().unwrap_or(Node::Concat(Vec::new())), height)
        } else {
            (Node::Alt(alts), height + 1)
        })
    }

    fn alternative(&mut self) -> Result<(Node, usize), String> {
        let mut items = Vec::new();
        let mut height = 0;
        while let Some((n, h)) = self.term()? {
            items.push(n);
            height = height.max(h);
        }
        Ok((Node::Concat(items), height + 1))
    }

    /// `None` when the next token cannot start a term; the caller then
    /// expects `|`, `)` or the end, and anything else (a stray quantifier)
    /// ends up as an error there, as in libstdc++.
    fn term(&mut self) -> Result<Option<(Node, usize)>, String> {
        match self.peek() {
            // Anchors take no quantifier: `^*` is an error in libstdc++.
            Some(b'^') => {
                self.i += 1;
                return Ok(Some((Node::Start, 1)));
            }
            Some(b'$') => {
                self.i += 1;
                self.has_end_anchor = true;
                return Ok(Some((Node::End, 1)));
            }
            _ => {}
        }
        let Some((mut atom, mut height)) = self.atom()? else { return Ok(None) };
        // Quantifiers stack (`a**`, `a+?` = `(a+)?`); POSIX has no lazy ones.
        loop {
            let (min, max, kind) = match self.peek() {
                Some(b'*') => (0, None, Quant::Star),
                Some(b'+') => (1, None, Quant::Plus),
                Some(b'?') => (0, Some(1), Quant::Opt),
                Some(b'{') => {
                    self.i += 1;
                    let (min, max) = self.interval()?;
                    atom = Node::Repeat { node: Box::new(atom), min, max, kind: Quant::Interval };
                    height = self.deeper(height)?;
                    continue;
                }
                _ => break,
            };
            self.i += 1;
            atom = Node::Repeat { node: Box::new(atom), min, max, kind };
            height = self.deeper(height)?;
        }
        Ok(Some((atom, height)))
    }

    fn deeper(&self, height: usize) -> Result<usize, String> {
        if height >= MAX_NESTING {
            Err(format!("nested deeper than {MAX_NESTING} levels"))
        } else {
            Ok(height + 1)
        }
    }

    fn number(&mut self) -> Result<Option<u64>, String> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        if start == self.i {
            return Ok(None);
        }
        // libstdc++ reads the count into a `long` and rejects overflow.
        let mut v: u64 = 0;
        for &d in &self.p[start..self.i] {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
                .filter(|&v| v <= i64::MAX as u64)
                .ok_or_else(|| err("repetition count too large"))?;
        }
        Ok(Some(v))
    }

    /// After `{`: `m}`, `m,}` or `m,n}`; no blanks, no omitted minimum.
    fn interval(&mut self) -> Result<(u64, Option<u64>), String> {
        let min = self.number()?.ok_or_else(|| err("expected a number after '{'"))?;
        let max = if self.peek() == Some(b',') {
            self.i += 1;
            match self.number()? {
                Some(n) if n < min => return Err(err("invalid range in '{}'")),
                Some(n) => Some(n),
                None => None,
            }
        } else {
            Some(min)
        };
        if self.peek() != Some(b'}') {
            return Err(err("expected '}' to close the repetition"));
        }
        self.i += 1;
        Ok((min, max))
    }

    fn atom(&mut self) -> Result<Option<(Node, usize)>, String> {
        let Some(c) = self.peek() else { return Ok(None) };
        match c {
            b'.' => {
                self.i += 1;
                Ok(Some((Node::Any, 1)))
            }
            b'\\' => {
                let Some(&e) = self.p.get(self.i + 1) else {
                    return Err(err("trailing backslash"));
                };
                // libstdc++ is built without GNU extensions here: escaping
                // anything but a special character is rejected.
                if !SPECIAL.contains(&e) {
                    return Err(err("invalid escape"));
                }
                self.i += 2;
                Ok(Some((Node::Byte(e), 1)))
            }
            b'(' => {
                self.i += 1;
                self.groups += 1;
                let index = self.groups;
                // Checked before descending: the parser itself recurses.
                self.depth += 1;
                if self.depth > MAX_NESTING {
                    return Err(format!("nested deeper than {MAX_NESTING} levels"));
                }
                let (inner, height) = self.disjunction()?;
                self.depth -= 1;
                if self.peek() != Some(b')') {
                    return Err(err("unmatched '('"));
                }
                self.i += 1;
                Ok(Some((Node::Group(Box::new(inner), index), self.deeper(height)?)))
            }
            b'[' => {
                self.i += 1;
                self.bracket().map(|n| Some((n, 1)))
            }
            b')' | b'|' | b'*' | b'+' | b'?' | b'{' | b'^' | b'$' => Ok(None),
            _ => {
                self.i += 1;
                Ok(Some((Node::Byte(c), 1)))
            }
        }
    }

    /// Reads `[:name:]`, `[.name.]` or `[=name=]` after the opening `[`
    /// and the delimiter have been seen; returns the name.
    fn class_name(&mut self, delim: u8) -> Result<&'a [u8], String> {
        let start = self.i;
        while self.i < self.p.len() && self.p[self.i] != delim {
            self.i += 1;
        }
        let name = &self.p[start..self.i];
        if self.p.get(self.i) != Some(&delim) || self.p.get(self.i + 1) != Some(&b']') {
            return Err(err("unterminated character class"));
        }
        self.i += 2;
        Ok(name)
    }

    /// After `[`. libstdc++'s rules: `]` right after `[` or `[^` is literal,
    /// `\` is literal, `-` is literal only first or last, a range must start
    /// at a single character (not a class) and cannot follow another range.
    fn bracket(&mut self) -> Result<Node, String> {
        let mut set: ByteSet = [false; 256];
        let negate = self.peek() == Some(b'^');
        if negate {
            self.i += 1;
        }
        // The character that may still become the start of a range.
        let mut last: Option<u8> = None;
        // Whether the previous item was a class (which cannot start a range).
        let mut last_was_class = false;
        let mut first = true;
        loop {
            let Some(c) = self.peek() else { return Err(err("unmatched '['")) };
            self.i += 1;
            let at_start = std::mem::take(&mut first);
            let item: Item = match c {
                b']' if !at_start => break,
                b'-' if at_start => Item::Char(b'-'),
                b'-' => {
                    match self.peek() {
                        None => return Err(err("unmatched '['")),
                        Some(b']') => {
                            self.i += 1;
                            if let Some(l) = last.take() {
                                set[l as usize] = true;
                            }
                            set[b'-' as usize] = true;
                            break;
                        }
                        _ => {}
                    }
                    if last_was_class {
                        return Err(err("invalid start of range in bracket expression"));
                    }
                    let Some(lo) = last.take() else {
                        return Err(err("invalid dash in bracket expression"));
                    };
                    let hi = match self.bracket_char()? {
                        Some(h) => h,
                        None => return Err(err("invalid end of range in bracket expression")),
                    };
                    add_range(&mut set, lo, hi)?;
                    last_was_class = false;
                    continue;
                }
                b'[' => match self.peek() {
                    Some(d @ (b':' | b'.' | b'=')) => {
                        self.i += 1;
                        let name = self.class_name(d)?;
                        match d {
                            b':' => Item::Class(Box::new(char_class(name)?)),
                            b'.' => Item::Char(collating_element(name)?),
                            _ => {
                                let ch = collating_element(name)?;
                                let mut s = [false; 256];
                                s[ch as usize] = true;
                                Item::Class(Box::new(s))
                            }
                        }
                    }
                    _ => Item::Char(b'['),
                },
                _ => Item::Char(c),
            };
            if let Some(l) = last.take() {
                set[l as usize] = true;
            }
            match item {
                Item::Char(ch) => {
                    last = Some(ch);
                    last_was_class = false;
                }
                Item::Class(s) => {
                    for (dst, src) in set.iter_mut().zip(s.iter()) {
                        *dst |= *src;
                    }
                    last_was_class = true;
                }
            }
        }
        if let Some(l) = last {
            set[l as usize] = true;
        }
        if negate {
            for b in set.iter_mut() {
                *b = !*b;
            }
        }
        Ok(Node::Set(Box::new(set)))
    }

    /// The end of a range: a plain byte, including `-` (`[!--]`). A
    /// `[.x.]` element is refused here, as libstdc++ refuses `[a-[.c.]]`.
    fn bracket_char(&mut self) -> Result<Option<u8>, String> {
        match self.peek() {
            None => Err(err("unmatched '['")),
            Some(b'[') if matches!(self.p.get(self.i + 1), Some(b':' | b'.' | b'=')) => Ok(None),
            Some(b']') => Ok(None),
            Some(c) => {
                self.i += 1;
                Ok(Some(c))
            }
        }
    }
}

enum Item {
    Char(u8),
    Class(Box<ByteSet>),
}

/// Ranges compare `char` values, which are signed on the platforms Nix
/// runs on: bytes 0x80–0xFF sort *before* ASCII, so `[\x80-a]` is valid
/// and covers 0x80–0xFF plus 0x00–0x61, while `[a-é]` is an error.
fn add_range(set: &mut ByteSet, lo: u8, hi: u8) -> Result<(), String> {
    let (l, h) = (lo as i8, hi as i8);
    if l > h {
        return Err(err("invalid range in bracket expression"));
    }
    for v in l..=h {
        set[(v as u8) as usize] = true;
    }
    Ok(())
}

/// Named classes of the "C" locale; libstdc++ lowercases the name first
/// and adds `d`, `w` (alnum and `_`) and `s`.
fn char_class(name: &[u8]) -> Result<ByteSet, String> {
    let lower: Vec<u8> = name.iter().map(|c| c.to_ascii_lowercase()).collect();
    let pred: fn(u8) -> bool = match lower.as_slice() {
        b"alnum" => |c| c.is_ascii_alphanumeric(),
        b"alpha" => |c| c.is_ascii_alphabetic(),
        b"blank" => |c| c == b' ' || c == b'\t',
        b"cntrl" => |c| c.is_ascii_control(),
        b"digit" | b"d" => |c| c.is_ascii_digit(),
        b"graph" => |c| c.is_ascii_graphic(),
        b"lower" => |c| c.is_ascii_lowercase(),
        b"print" => |c| c.is_ascii_graphic() || c == b' ',
        b"punct" => |c| c.is_ascii_punctuation(),
        // C's isspace includes vertical tab, which Rust's is_ascii_whitespace
        // leaves out.
        b"space" | b"s" => |c| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'),
        b"upper" => |c| c.is_ascii_uppercase(),
        b"xdigit" => |c| c.is_ascii_hexdigit(),
        b"w" => |c| c.is_ascii_alphanumeric() || c == b'_',
        _ => return Err(format!("unknown character class '[:{}:]'", String::from_utf8_lossy(name))),
    };
    let mut set = [false; 256];
    for (b, slot) in set.iter_mut().enumerate() {
        *slot = pred(b as u8);
    }
    Ok(set)
}

/// The POSIX portable character set names, indexed by ASCII code; libstdc++
/// accepts exactly these inside `[. .]` and `[= =]` (so `[[.a.]]` works
/// because "a" is the name of `a`, but `[[.-.]]` must be `[[.hyphen.]]`).
const COLLATING_NAMES: [&str; 128] = [
    "NUL",
    "SOH",
    "STX",
    "ETX",
    "EOT",
    "ENQ",
    "ACK",
    "alert",
    "backspace",
    "tab",
    "newline",
    "vertical-tab",
    "form-feed",
    "carriage-return",
    "SO",
    "SI",
    "DLE",
    "DC1",
    "DC2",
    "DC3",
    "DC4",
    "NAK",
    "SYN",
    "ETB",
    "CAN",
    "EM",
    "SUB",
    "ESC",
    "IS4",
    "IS3",
    "IS2",
    "IS1",
    "space",
    "exclamation-mark",
    "quotation-mark",
    "number-sign",
    "dollar-sign",
    "percent-sign",
    "ampersand",
    "apostrophe",
    "left-parenthesis",
    "right-parenthesis",
    "asterisk",
    "plus-sign",
    "comma",
    "hyphen",
    "period",
    "slash",
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "colon",
    "semicolon",
    "less-than-sign",
    "equals-sign",
    "greater-than-sign",
    "question-mark",
    "commercial-at",
    "A",
    "B",
    "C",
    "D",
    "E",
    "F",
    "G",
    "H",
    "I",
    "J",
    "K",
    "L",
    "M",
    "N",
    "O",
    "P",
    "Q",
    "R",
    "S",
    "T",
    "U",
    "V",
    "W",
    "X",
    "Y",
    "Z",
    "left-square-bracket",
    "backslash",
    "right-square-bracket",
    "circumflex",
    "underscore",
    "grave-accent",
    "a",
    "b",
    "c",
    "d",
    "e",
    "f",
    "g",
    "h",
    "i",
    "j",
    "k",
    "l",
    "m",
    "n",
    "o",
    "p",
    "q",
    "r",
    "s",
    "t",
    "u",
    "v",
    "w",
    "x",
    "y",
    "z",
    "left-curly-bracket",
    "vertical-line",
    "right-curly-bracket",
    "tilde",
    "DEL",
];

fn collating_element(name: &[u8]) -> Result<u8, String> {
    COLLATING_NAMES
        .iter()
        .position(|n| n.as_bytes() == name)
        .map(|i| i as u8)
        .ok_or_else(|| format!("unknown collating element '{}'", String::from_utf8_lossy(name)))
}

fn parse(pattern: &str) -> Result<(Node, bool), String> {
    let mut p = Parser { p: pattern.as_bytes(), i: 0, has_end_anchor: false, groups: 0, depth: 0 };
    let (node, _) = p.disjunction()?;
    match p.peek() {
        None => Ok((node, p.has_end_anchor)),
        Some(b')') => Err(err("unmatched ')'")),
        Some(_) => Err(err("repetition operator without an operand")),
    }
}

/// `(allocated, reachable)` automaton states libstdc++ creates for `node`:
/// a `{m,n}` repetition clones the reachable part of its operand once per
/// copy while the original stays allocated. Saturating, so absurd counts
/// simply exceed the limit.
fn libstdcxx_states(node: &Node) -> (u64, u64) {
    match node {
        Node::Byte(_) | Node::Set(_) | Node::Any | Node::Start | Node::End => (1, 1),
        Node::Group(inner, _) => {
            let (a, r) = libstdcxx_states(inner);
            (a.saturating_add(2), r.saturating_add(2))
        }
        // Every alternative ends in a dummy state.
        Node::Concat(items) => {
            items.iter().map(libstdcxx_states).fold((1, 1), |(a, r), (x, y)| (a.saturating_add(x), r.saturating_add(y)))
        }
        Node::Alt(alts) => {
            let extra = 2 * (alts.len() as u64).saturating_sub(1);
            alts.iter()
                .map(libstdcxx_states)
                .fold((extra, extra), |(a, r), (x, y)| (a.saturating_add(x), r.saturating_add(y)))
        }
        Node::Repeat { node, min, max, kind } => {
            let (a, r) = libstdcxx_states(node);
            let added = match kind {
                Quant::Star | Quant::Plus => 1,
                Quant::Opt => 2,
                Quant::Interval => {
                    let copies = min.saturating_mul(r);
                    let tail = match max {
                        None => r.saturating_add(1),
                        Some(n) => n.saturating_sub(*min).saturating_mul(r.saturating_add(1)).saturating_add(1),
                    };
                    // The leading dummy, the copies and the optional tail;
                    // the operand itself is not part of the result.
                    let reach = 1u64.saturating_add(copies).saturating_add(tail);
                    return (a.saturating_add(reach), reach);
                }
            };
            (a.saturating_add(added), r.saturating_add(added))
        }
    }
}

// ---------------------------------------------------------------------------
// libstdc++'s backtracking executor, reproduced
// ---------------------------------------------------------------------------
//
// Nix's results are whatever libstdc++'s depth-first executor produces, and
// its quirks (greedy loops that are never retried with fewer iterations once
// anything matched, an extra empty loop iteration that overwrites groups)
// cannot be expressed with any standard matching semantics. So the pattern
// is also compiled into the same automaton shape libstdc++ builds and run
// with the same search order. That search is exponential in bad cases (as it
// is in Nix), so it runs on a step budget; past it, the linear-time
// automata (translation further down) answer instead.

const NONE: usize = usize::MAX;

/// Steps one search may take in the backtracking executor before giving
/// way to the automata.
pub const STEP_BUDGET: u64 = 2_000_000;

/// Pending backtracking tasks allowed at once (about 40 bytes each). The
/// stack grows with the input for patterns like `(.*)x`; libstdc++ recurses
/// instead and Nix reports a stack overflow around a million bytes.
const MAX_TASKS: usize = 1 << 20;

#[derive(Debug, Clone, Copy)]
enum Op {
    Byte(u8),
    /// Index into `Program::sets`.
    Set(usize),
    Any,
    LineBegin,
    LineEnd,
    GroupBegin(usize),
    GroupEnd(usize),
    /// Explore the `.0` branch, then `next`, keeping the longer match.
    Alt(usize),
    /// Greedy loop: `.0` is one more iteration, `next` leaves the loop.
    Repeat(usize),
    Dummy,
    Accept,
}

#[derive(Debug, Clone, Copy)]
struct State {
    op: Op,
    next: usize,
}

#[derive(Debug)]
struct Program {
    states: Vec<State>,
    sets: Vec<ByteSet>,
    start: usize,
    groups: usize,
}

struct Builder {
    states: Vec<State>,
    sets: Vec<ByteSet>,
    /// Sets already stored, by address of the parsed set: `{m,n}` compiles
    /// its operand once per copy and the copies can share.
    set_ids: std::collections::HashMap<usize, usize>,
}

impl Builder {
    fn add(&mut self, op: Op) -> usize {
        self.states.push(State { op, next: NONE });
        self.states.len() - 1
    }

    fn link(&mut self, from: usize, to: usize) {
        if let Some(st) = self.states.get_mut(from) {
            st.next = to;
        }
    }

    /// Returns (first state, last state); the last state's `next` is left
    /// for the caller to link, as libstdc++'s `_StateSeq::_M_append` does.
    fn build(&mut self, node: &Node) -> (usize, usize) {
        match node {
            Node::Byte(b) => {
                let s = self.add(Op::Byte(*b));
                (s, s)
            }
            Node::Any => {
                let s = self.add(Op::Any);
                (s, s)
            }
            Node::Set(set) => {
                let key = &**set as *const ByteSet as usize;
                let sets = &mut self.sets;
                let id = *self.set_ids.entry(key).or_insert_with(|| {
                    sets.push(**set);
                    sets.len() - 1
                });
                let s = self.add(Op::Set(id));
                (s, s)
            }
            Node::Start => {
                let s = self.add(Op::LineBegin);
                (s, s)
            }
            Node::End => {
                let s = self.add(Op::LineEnd);
                (s, s)
            }
            Node::Group(inner, index) => {
                let b = self.add(Op::GroupBegin(*index));
                let (s, e) = self.build(inner);
                self.link(b, s);
                let end = self.add(Op::GroupEnd(*index));
                self.link(e, end);
                (b, end)
            }
            // Each alternative ends in a dummy state in libstdc++.
            Node::Concat(items) => {
                let mut first = NONE;
                let mut last = NONE;
                for item in items {
                    let (s, e) = self.build(item);
                    if first == NONE {
                        first = s;
                    } else {
                        self.link(last, s);
                    }
                    last = e;
                }
                let d = self.add(Op::Dummy);
                if first == NONE {
                    (d, d)
                } else {
                    self.link(last, d);
                    (first, d)
                }
            }
            // `a|b|c` nests to the left: ((a|b)|c).
            Node::Alt(alts) => {
                let Some((head, rest)) = alts.split_first() else {
                    let d = self.add(Op::Dummy);
                    return (d, d);
                };
                let (mut s, mut e) = self.build(head);
                for a in rest {
                    let (s2, e2) = self.build(a);
                    let alt = self.add(Op::Alt(s));
                    self.link(alt, s2);
                    let d = self.add(Op::Dummy);
                    self.link(e, d);
                    self.link(e2, d);
                    s = alt;
                    e = d;
                }
                (s, e)
            }
            Node::Repeat { node, min, max, kind } => match kind {
                Quant::Star => {
                    let (s, e) = self.build(node);
                    let r = self.add(Op::Repeat(s));
                    self.link(e, r);
                    (r, r)
                }
                Quant::Plus => {
                    let (s, e) = self.build(node);
                    let r = self.add(Op::Repeat(s));
                    self.link(e, r);
                    (s, r)
                }
                Quant::Opt => {
                    let (s, e) = self.build(node);
                    let end = self.add(Op::Dummy);
                    let r = self.add(Op::Repeat(s));
                    self.link(r, end);
                    self.link(e, end);
                    (r, end)
                }
                Quant::Interval => {
                    let d = self.add(Op::Dummy);
                    let mut last = d;
                    for _ in 0..*min {
                        let (s, e) = self.build(node);
                        self.link(last, s);
                        last = e;
                    }
                    match max {
                        None => {
                            let (s, e) = self.build(node);
                            let r = self.add(Op::Repeat(s));
                            self.link(e, r);
                            self.link(last, r);
                            last = r;
                        }
                        Some(n) => {
                            // Optional copies nest: each may continue into
                            // the next or leave to the common end.
                            let fin = self.add(Op::Dummy);
                            for _ in 0..n.saturating_sub(*min) {
                                let (s, e) = self.build(node);
                                let r = self.add(Op::Repeat(s));
                                self.link(r, fin);
                                self.link(last, r);
                                last = e;
                            }
                            self.link(last, fin);
                            last = fin;
                        }
                    }
                    (d, last)
                }
            },
        }
    }
}

fn count_groups(node: &Node) -> usize {
    match node {
        Node::Group(inner, index) => (*index).max(count_groups(inner)),
        Node::Concat(v) | Node::Alt(v) => v.iter().map(count_groups).max().unwrap_or(0),
        Node::Repeat { node, .. } => count_groups(node),
        _ => 0,
    }
}

impl Program {
    fn new(root: &Node) -> Program {
        let mut b = Builder { states: Vec::new(), sets: Vec::new(), set_ids: Default::default() };
        // The whole pattern is group 0, followed by the accepting state.
        let g0 = b.add(Op::GroupBegin(0));
        let (s, e) = b.build(root);
        b.link(g0, s);
        let g0_end = b.add(Op::GroupEnd(0));
        b.link(e, g0_end);
        let acc = b.add(Op::Accept);
        b.link(g0_end, acc);
        Program { states: b.states, sets: b.sets, start: g0, groups: count_groups(root) }
    }
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    first: usize,
    second: usize,
    matched: bool,
}

const UNSET: Slot = Slot { first: NONE, second: NONE, matched: false };

enum Task {
    Explore(usize),
    SetPos(usize),
    /// Between the two branches of an alternative.
    AltMiddle,
    /// After both branches.
    AltEnd,
    /// After the "once more" branch of a loop.
    RepeatExit(usize),
    RestoreRep(usize, (usize, u8)),
    RestoreSlot(usize, Slot),
}

struct OutOfSteps;

/// One depth-first run from a fixed start, as libstdc++'s `_M_main` in DFS
/// mode; recursion is replaced by an explicit task stack so that long
/// inputs cannot overflow the call stack.
struct Exec<'a> {
    prog: &'a Program,
    hay: &'a [u8],
    exact: bool,
    not_null: bool,
    steps: u64,
    // Per-run state.
    begin: usize,
    begin_is_bol: bool,
    pos: usize,
    has_sol: bool,
    sol_pos: Option<usize>,
    cur: Vec<Slot>,
    best: Vec<Slot>,
    /// Per loop state: position and how often its body was entered there
    /// (libstdc++ allows twice, which is where the extra empty iteration
    /// comes from).
    rep: Vec<(usize, u8)>,
    saved: Vec<bool>,
    tasks: Vec<Task>,
}

impl<'a> Exec<'a> {
    fn new(prog: &'a Program, hay: &'a [u8]) -> Exec<'a> {
        Exec {
            prog,
            hay,
            exact: false,
            not_null: false,
            steps: STEP_BUDGET,
            begin: 0,
            begin_is_bol: true,
            pos: 0,
            has_sol: false,
            sol_pos: None,
            cur: vec![UNSET; prog.groups + 1],
            best: vec![UNSET; prog.groups + 1],
            rep: vec![(NONE, 0); prog.states.len()],
            saved: Vec::new(),
            tasks: Vec::new(),
        }
    }

    /// `std::regex_match`.
    fn full_match(&mut self) -> Result<Option<Vec<Option<String>>>, OutOfSteps> {
        self.exact = true;
        self.not_null = false;
        self.steps = STEP_BUDGET;
        Ok(if self.run(0, true)? { Some(self.groups()) } else { None })
    }

    /// `std::regex_search` on `hay[from..]`: each start position in turn,
    /// or only `from` when `continuous`. `^` matches only at the first
    /// position tried, and there only without `prev_avail`. Each call gets
    /// a fresh step budget.
    fn search(
        &mut self,
        from: usize,
        continuous: bool,
        not_null: bool,
        prev_avail: bool,
    ) -> Result<Option<Found>, OutOfSteps> {
        self.exact = false;
        self.not_null = not_null;
        self.steps = STEP_BUDGET;
        for start in from..=self.hay.len() {
            let bol = start == from && !prev_avail;
            if self.run(start, bol)? {
                let end = self.sol_pos.unwrap_or(start);
                return Ok(Some((start, end, self.groups())));
            }
            if continuous {
                break;
            }
        }
        Ok(None)
    }

    /// Runs from `begin`; `Ok(true)` if something matched (then `sol_pos`
    /// and `best` hold the longest match and its groups).
    fn run(&mut self, begin: usize, begin_is_bol: bool) -> Result<bool, OutOfSteps> {
        self.begin = begin;
        self.begin_is_bol = begin_is_bol;
        self.pos = begin;
        self.has_sol = false;
        self.sol_pos = None;
        self.cur.fill(UNSET);
        self.tasks.clear();
        self.saved.clear();
        self.tasks.push(Task::Explore(self.prog.start));
        while let Some(task) = self.tasks.pop() {
            match task {
                Task::Explore(i) => {
                    if self.steps == 0 || self.tasks.len() > MAX_TASKS {
                        // Leave the loop counters as they were for a retry.
                        self.unwind();
                        return Err(OutOfSteps);
                    }
                    self.steps -= 1;
                    self.explore(i);
                }
                Task::SetPos(p) => self.pos = p,
                Task::AltMiddle => {
                    self.saved.push(self.has_sol);
                    self.has_sol = false;
                }
                Task::AltEnd => {
                    let earlier = self.saved.pop().unwrap_or(false);
                    self.has_sol |= earlier;
                }
                Task::RepeatExit(i) => {
                    // A loop whose longer variant matched anything is never
                    // retried with fewer iterations.
                    if !self.has_sol {
                        if let Some(st) = self.prog.states.get(i) {
                            self.tasks.push(Task::Explore(st.next));
                        }
                    }
                }
                Task::RestoreRep(i, v) => {
                    if let Some(r) = self.rep.get_mut(i) {
                        *r = v;
                    }
                }
                Task::RestoreSlot(g, v) => {
                    if let Some(s) = self.cur.get_mut(g) {
                        *s = v;
                    }
                }
            }
        }
        Ok(self.sol_pos.is_some())
    }

    /// Undoes pending loop-counter changes after an aborted run.
    fn unwind(&mut self) {
        while let Some(task) = self.tasks.pop() {
            if let Task::RestoreRep(i, v) = task {
                if let Some(r) = self.rep.get_mut(i) {
                    *r = v;
                }
            }
        }
    }

    fn explore(&mut self, i: usize) {
        let Some(&State { op, next }) = self.prog.states.get(i) else { return };
        let here = self.hay.get(self.pos).copied();
        let consume = |this: &mut Self| {
            this.tasks.push(Task::SetPos(this.pos));
            this.pos += 1;
            this.tasks.push(Task::Explore(next));
        };
        match op {
            Op::Byte(b) => {
                if here == Some(b) {
                    consume(self);
                }
            }
            Op::Any => {
                if here.is_some_and(|c| c != 0) {
                    consume(self);
                }
            }
            Op::Set(id) => {
                if let (Some(c), Some(set)) = (here, self.prog.sets.get(id)) {
                    if set[c as usize] {
                        consume(self);
                    }
                }
            }
            Op::LineBegin => {
                if self.pos == self.begin && self.begin_is_bol {
                    self.tasks.push(Task::Explore(next));
                }
            }
            Op::LineEnd => {
                if self.pos == self.hay.len() {
                    self.tasks.push(Task::Explore(next));
                }
            }
            Op::GroupBegin(g) => {
                if let Some(slot) = self.cur.get_mut(g) {
                    let old = *slot;
                    slot.first = self.pos;
                    self.tasks.push(Task::RestoreSlot(g, old));
                }
                self.tasks.push(Task::Explore(next));
            }
            Op::GroupEnd(g) => {
                if let Some(slot) = self.cur.get_mut(g) {
                    let old = *slot;
                    slot.second = self.pos;
                    slot.matched = true;
                    self.tasks.push(Task::RestoreSlot(g, old));
                }
                self.tasks.push(Task::Explore(next));
            }
            Op::Alt(alt) => {
                self.tasks.push(Task::AltEnd);
                self.tasks.push(Task::Explore(next));
                self.tasks.push(Task::AltMiddle);
                self.tasks.push(Task::Explore(alt));
            }
            Op::Repeat(body) => {
                self.tasks.push(Task::RepeatExit(i));
                let Some(&count) = self.rep.get(i) else { return };
                let entered = if count.1 == 0 || count.0 != self.pos {
                    Some((self.pos, 1))
                } else if count.1 < 2 {
                    Some((self.pos, count.1 + 1))
                } else {
                    None
                };
                if let Some(v) = entered {
                    self.rep[i] = v;
                    self.tasks.push(Task::RestoreRep(i, count));
                    self.tasks.push(Task::Explore(body));
                }
            }
            Op::Dummy => self.tasks.push(Task::Explore(next)),
            Op::Accept => {
                self.has_sol = if self.exact { self.pos == self.hay.len() } else { true };
                if self.not_null && self.pos == self.begin {
                    self.has_sol = false;
                }
                if self.has_sol && self.sol_pos.is_none_or(|p| p < self.pos) {
                    self.sol_pos = Some(self.pos);
                    self.best.clone_from(&self.cur);
                }
            }
        }
    }

    fn groups(&self) -> Vec<Option<String>> {
        self.best
            .iter()
            .skip(1)
            .map(|s| if s.matched { self.hay.get(s.first..s.second).map(lossy) } else { None })
            .collect()
    }
}

type Found = (usize, usize, Vec<Option<String>>);

// ---------------------------------------------------------------------------
// Translation to regex-automata syntax (bytes, Unicode off)
// ---------------------------------------------------------------------------

/// Matches nothing at all: the end of input followed by a byte.
const NEVER: &str = r"(?:\z[\x00-\xFF])";

fn push_byte(out: &mut String, b: u8) {
    out.push_str(&format!("\\x{b:02X}"));
}

fn emit(node: &Node, end_matches: bool, out: &mut String) {
    match node {
        Node::Byte(b) => push_byte(out, *b),
        Node::Any => out.push_str(r"[\x01-\xFF]"),
        Node::Start => out.push_str(r"\A"),
        Node::End => out.push_str(if end_matches { r"\z" } else { NEVER }),
        Node::Set(set) => {
            if set.iter().all(|&b| !b) {
                out.push_str(NEVER);
                return;
            }
            out.push('[');
            let mut b = 0usize;
            while b < 256 {
                if set[b] {
                    let start = b;
                    while b + 1 < 256 && set[b + 1] {
                        b += 1;
                    }
                    push_byte(out, start as u8);
                    if b > start {
                        out.push('-');
                        push_byte(out, b as u8);
                    }
                }
                b += 1;
            }
            out.push(']');
        }
        Node::Group(inner, _) => {
            out.push('(');
            emit(inner, end_matches, out);
            out.push(')');
        }
        Node::Concat(items) => {
            for n in items {
                emit(n, end_matches, out);
            }
        }
        Node::Alt(alts) => {
            out.push_str("(?:");
            for (i, n) in alts.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                emit(n, end_matches, out);
            }
            out.push(')');
        }
        Node::Repeat { node, min, max, .. } => {
            // Always wrap, so stacked quantifiers never read as a lazy `*?`.
            out.push_str("(?:");
            emit(node, end_matches, out);
            out.push(')');
            match (min, max) {
                (0, None) => out.push('*'),
                (1, None) => out.push('+'),
                (m, None) => out.push_str(&format!("{{{m},}}")),
                (m, Some(n)) if m == n => out.push_str(&format!("{{{m}}}")),
                (m, Some(n)) => out.push_str(&format!("{{{m},{n}}}")),
            }
        }
    }
}

fn translate(node: &Node, end_matches: bool) -> String {
    let mut s = String::new();
    emit(node, end_matches, &mut s);
    s
}

fn syntax_config() -> syntax::Config {
    // Each level of our tree becomes at most two in the translation.
    let nest = u32::try_from(2 * MAX_NESTING + 16).unwrap_or(u32::MAX);
    syntax::Config::new().unicode(false).utf8(false).nest_limit(nest)
}

fn build_meta(pattern: &str) -> Result<meta::Regex, String> {
    meta::Regex::builder()
        .syntax(syntax_config())
        .configure(meta::Config::new().utf8_empty(false))
        .build(pattern)
        .map_err(|e| e.to_string())
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl NixRegex {
    /// Compiles a Nix (POSIX extended) pattern. Errors start with Nix's own
    /// wording, `invalid regular expression '…'` (followed by the reason) or
    /// `memory limit exceeded by regular expression '…'`.
    pub fn compile(pattern: &str) -> Result<NixRegex, String> {
        let wrap = |detail: String| format!("invalid regular expression '{pattern}': {detail}");
        let (node, has_end) = parse(pattern).map_err(wrap)?;
        // The whole pattern sits in an implicit group, plus an accept state.
        if libstdcxx_states(&node).0.saturating_add(3) > STATE_LIMIT {
            return Err(format!("memory limit exceeded by regular expression '{pattern}'"));
        }
        let program = Program::new(&node);
        let at_end = translate(&node, true);
        let search = build_meta(&at_end).map_err(wrap)?;
        let longest = hybrid::dfa::DFA::builder()
            .syntax(syntax_config())
            .thompson(regex_automata::nfa::thompson::Config::new().utf8(false))
            .configure(
                hybrid::dfa::DFA::config()
                    .match_kind(MatchKind::All)
                    // Never give up on a thrashing cache: correctness first.
                    .minimum_cache_clear_count(None)
                    // The default 2 MiB is below the minimum for patterns
                    // near libstdc++'s own size limit (`x{99993}`).
                    .cache_capacity(32 << 20),
            )
            .build(&at_end)
            .map_err(|e| wrap(e.to_string()))?;
        let groups_at_end = build_meta(&format!(r"(?:{at_end})\z")).map_err(wrap)?;
        let groups_mid = if has_end {
            Some(build_meta(&format!(r"(?:{})\z", translate(&node, false))).map_err(wrap)?)
        } else {
            None
        };
        Ok(NixRegex { pattern: pattern.to_string(), program, search, longest, groups_at_end, groups_mid })
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Number of capture groups (what each `Groups` / match list holds).
    pub fn group_count(&self) -> usize {
        self.program.groups
    }

    /// `builtins.match`: the groups when the whole string matches, `None`
    /// otherwise.
    pub fn full_match(&self, s: &str) -> Option<Vec<Option<String>>> {
        let hay = s.as_bytes();
        // Whether the whole string matches is a question of the language,
        // which the automata answer in linear time; only which text each
        // group holds needs libstdc++'s search order, so the executor runs
        // only for a match with groups.
        if !self.groups_at_end.is_match(Input::new(hay).anchored(Anchored::Yes)) {
            return None;
        }
        if self.groups_at_end.captures_len() == 1 {
            return Some(vec![]);
        }
        match Exec::new(&self.program, hay).full_match() {
            Ok(found) => found,
            Err(OutOfSteps) => self.automata_groups(hay, 0, hay.len()),
        }
    }

    /// `builtins.split`: text pieces interleaved with the groups of each
    /// match; always starts and ends with a `Text`.
    pub fn split(&self, s: &str) -> Vec<SplitPart> {
        let hay = s.as_bytes();
        let mut cache = self.longest.create_cache();
        let mut exec = Exec::new(&self.program, hay);
        let mut out = Vec::new();
        let mut prefix_start = 0usize;
        // std::regex_iterator's own flag: set by its first step past the
        // initial match, after which `^` can no longer match.
        let mut prev_avail = false;
        let mut current = self.next_match(&mut exec, &mut cache, hay, 0, false, prev_avail);
        while let Some((ms, me, groups)) = current.take() {
            out.push(SplitPart::Text(lossy(hay.get(prefix_start..ms).unwrap_or_default())));
            out.push(SplitPart::Groups(groups));
            prefix_start = me;
            // After an empty match, first try a non-empty match at the same
            // place, else move one byte on.
            let mut from = me;
            if ms == me {
                if me >= hay.len() {
                    break;
                }
                if let Some(m) = self.next_match(&mut exec, &mut cache, hay, me, true, prev_avail) {
                    current = Some(m);
                    continue;
                }
                from += 1;
            }
            prev_avail = true;
            current = self.next_match(&mut exec, &mut cache, hay, from, false, prev_avail);
        }
        out.push(SplitPart::Text(lossy(hay.get(prefix_start..).unwrap_or_default())));
        out
    }

    /// The next match from `from` (only at `from`, and non-empty, when
    /// `continuous`), by the libstdc++ executor or, past its step budget,
    /// by the automata.
    fn next_match(
        &self,
        exec: &mut Exec<'_>,
        cache: &mut hybrid::dfa::Cache,
        hay: &[u8],
        from: usize,
        continuous: bool,
        prev_avail: bool,
    ) -> Option<Found> {
        match exec.search(from, continuous, continuous, prev_avail) {
            Ok(found) => found,
            Err(OutOfSteps) => self.automata_next_match(cache, hay, from, continuous),
        }
    }

    // --- automata fallback -------------------------------------------------

    /// Groups of the first path (in backtracking order) matching exactly
    /// `hay[start..end]`, or `None` if no path does.
    fn automata_groups(&self, hay: &[u8], start: usize, end: usize) -> Option<Vec<Option<String>>> {
        let re = if end == hay.len() {
            &self.groups_at_end
        } else {
            self.groups_mid.as_ref().unwrap_or(&self.groups_at_end)
        };
        let cut = hay.get(..end)?;
        let input = Input::new(cut).range(start..end).anchored(Anchored::Yes);
        let mut caps = re.create_captures();
        re.search_captures(&input, &mut caps);
        if !caps.is_match() {
            return None;
        }
        let n = caps.group_len();
        Some((1..n).map(|g| caps.get_group(g).and_then(|sp| hay.get(sp.range())).map(lossy)).collect())
    }

    /// End of the longest match starting exactly at `start`, if any.
    fn automata_longest_from(&self, cache: &mut hybrid::dfa::Cache, hay: &[u8], start: usize) -> Option<usize> {
        let input = Input::new(hay).range(start..).anchored(Anchored::Yes);
        match self.longest.try_search_fwd(cache, &input) {
            Ok(found) => found.map(|hm| hm.offset()),
            // Not expected with this configuration (no quit bytes, never
            // gives up); fall back to the leftmost-first end.
            Err(_) => self.search.search(&input).map(|m| m.end()),
        }
    }

    /// Leftmost start, then the longest end, then groups of the first path
    /// with exactly that extent.
    fn automata_next_match(
        &self,
        cache: &mut hybrid::dfa::Cache,
        hay: &[u8],
        from: usize,
        continuous: bool,
    ) -> Option<Found> {
        let start = if continuous { from } else { self.search.search(&Input::new(hay).range(from..))?.start() };
        let end = self.automata_longest_from(cache, hay, start)?;
        if continuous && end == start {
            return None;
        }
        let n = self.group_count();
        let groups = self.automata_groups(hay, start, end).unwrap_or_else(|| vec![None; n]);
        Some((start, end, groups))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(re: &str, s: &str) -> Option<Vec<Option<String>>> {
        NixRegex::compile(re).unwrap_or_else(|e| panic!("{e}")).full_match(s)
    }

    fn g(v: &[Option<&str>]) -> Option<Vec<Option<String>>> {
        Some(v.iter().map(|x| x.map(str::to_string)).collect())
    }

    /// Renders a split result like Nix's JSON, e.g. `["",["a"],"c"]`.
    fn sp(re: &str, s: &str) -> String {
        let parts = NixRegex::compile(re).unwrap_or_else(|e| panic!("{e}")).split(s);
        let v: Vec<serde_json::Value> = parts
            .into_iter()
            .map(|p| match p {
                SplitPart::Text(t) => serde_json::Value::String(t),
                SplitPart::Groups(gs) => serde_json::Value::Array(
                    gs.into_iter().map(|g| g.map_or(serde_json::Value::Null, serde_json::Value::String)).collect(),
                ),
            })
            .collect();
        serde_json::Value::Array(v).to_string()
    }

    fn invalid(re: &str) {
        match NixRegex::compile(re) {
            Ok(_) => panic!("{re:?} should be rejected"),
            Err(e) => assert!(e.starts_with(&format!("invalid regular expression '{re}'")), "{e}"),
        }
    }

    #[test]
    fn match_basics() {
        assert_eq!(m("", ""), g(&[]));
        assert_eq!(m("", "a"), None);
        assert_eq!(m("a", "A"), None);
        assert_eq!(m("()", ""), g(&[Some("")]));
        assert_eq!(m("(a)?b", "b"), g(&[None]));
        assert_eq!(m("((a)|b)+", "ab"), g(&[Some("b"), Some("a")]));
        assert_eq!(m("(a|b)*", "ab"), g(&[Some("b")]));
        assert_eq!(m("a|b|", ""), g(&[]));
        assert_eq!(m("(a|ab)(c|bcd)(d*)", "abcd"), g(&[Some("a"), Some("bcd"), Some("")]));
        assert_eq!(m("(a|ab)*c", "abc"), g(&[Some("ab")]));
        assert_eq!(m("(a*)?", "aa"), g(&[Some("aa")]));
        assert_eq!(m("((a*)b)*", "abb"), g(&[Some("b"), Some("")]));
        assert_eq!(m("(^a)", "a"), g(&[Some("a")]));
        assert_eq!(m("a($)", "a"), g(&[Some("")]));
        assert_eq!(m("a^b", "ab"), None);
        assert_eq!(m("([^-]*)-(.*)", "foo-1.2-3"), g(&[Some("foo"), Some("1.2-3")]));
        assert_eq!(m(".*(x).*", "axbxc"), g(&[Some("x")]));
        assert_eq!(m("(.*)(x)(.*)", "axbxc"), g(&[Some("axb"), Some("x"), Some("c")]));
    }

    #[test]
    fn quantifiers() {
        assert_eq!(m("x{2,3}", "xxx"), g(&[]));
        assert_eq!(m("x{2}", "xx"), g(&[]));
        assert_eq!(m("x{2}", "xxx"), None);
        assert_eq!(m("x{2,}", "xxxxx"), g(&[]));
        assert_eq!(m("x{0}", ""), g(&[]));
        assert_eq!(m("x{0,0}y", "y"), g(&[]));
        assert_eq!(m("x{1,2}{2}", "xxx"), g(&[]));
        assert_eq!(m("a**", "aa"), g(&[]));
        assert_eq!(m("a+*", "aa"), g(&[]));
        // No lazy quantifiers in POSIX: `*?` is `*` then `?`.
        assert_eq!(m("a*?", "aa"), g(&[]));
        assert_eq!(m("(a*?)", "aa"), g(&[Some("aa")]));
        assert_eq!(m("a}", "a}"), g(&[]));
    }

    #[test]
    fn escapes() {
        assert_eq!(m("\\.", "."), g(&[]));
        assert_eq!(m("\\.", "a"), None);
        assert_eq!(m("\\\\", "\\"), g(&[]));
        for c in ["|", "{", "$", "^", "(", ")", "*", "+", "?", "["] {
            assert_eq!(m(&format!("\\{c}"), c), g(&[]), "escaped {c}");
        }
        for re in ["\\n", "\\d", "\\1", "(a)\\1", "\\}", "\\]", "\\/", "\\-", "\\ ", "\\", "a\\"] {
            invalid(re);
        }
    }

    #[test]
    fn syntax_errors() {
        for re in [
            "*a",
            "(*)",
            "a|*b",
            "^*",
            "a$+",
            "x{2,1}",
            "x{,2}",
            "x{ 2}",
            "x{2 }",
            "a{1",
            "a{",
            "{",
            "(",
            ")",
            "a)",
            "[",
            "[]",
            "[^]",
            "[a",
            "[[:alpha:]",
            "[[:alpha]",
            "[[:foo:]]",
            "[a-z-0]",
            "[[:alpha:]-z]",
            "[a--]",
            "[z-a]",
            "[[.-.]]",
            "[[.0.]]",
            "[[=ab=]]",
            "[[=a=]-c]",
            "[a-[.c.]]",
            "[[.reverse-solidus.]]",
            "x{99999999999999999999}",
        ] {
            invalid(re);
        }
    }

    #[test]
    fn state_limit_like_libstdcxx() {
        // Pairs (largest accepted, smallest rejected) found by bisecting Nix.
        let pairs = [
            ("x{99993}", "x{99994}"),
            ("(x){24997}", "(x){24998}"),
            ("x{0,49996}", "x{0,49997}"),
            ("(a|b){12498}", "(a|b){12499}"),
            ("(a*){19997}", "(a*){19998}"),
            ("a{2,}{19997}", "a{2,}{19998}"),
            ("a*{49996}", "a*{49997}"),
            ("a+{49996}", "a+{49997}"),
            ("(a?b+){12498}", "(a?b+){12499}"),
            ("[ab]{3,7}{7690}", "[ab]{3,7}{7691}"),
            ("a|b{99989}", "a|b{99990}"),
            ("^$b{99991}", "^$b{99992}"),
        ];
        for (ok, bad) in pairs {
            // Building the accepted ones is slow in debug builds; checking
            // the count is what matters.
            let (node, _) = parse(ok).unwrap();
            assert!(libstdcxx_states(&node).0 + 3 <= STATE_LIMIT, "{ok}");
            assert_eq!(
                NixRegex::compile(bad).err(),
                Some(format!("memory limit exceeded by regular expression '{bad}'"))
            );
        }
        // The largest accepted pattern must still build.
        assert!(NixRegex::compile("x{99993}").is_ok());
        assert!(NixRegex::compile("x{1000000}").is_err());
        assert!(NixRegex::compile("((x{1000}){1000}){1000}").is_err());
    }

    #[test]
    fn brackets() {
        assert_eq!(m("[]a]+", "]a]"), g(&[]));
        assert_eq!(m("[^]a]", "b"), g(&[]));
        assert_eq!(m("[^]a]", "]"), None);
        assert_eq!(m("[^]]+", "ab"), g(&[]));
        assert_eq!(m("[]]+", "]]"), g(&[]));
        assert_eq!(m("[]-a]+", "]^a"), g(&[]));
        assert_eq!(m("[\\]", "\\"), g(&[]));
        assert_eq!(m("[\\n]+", "\\n"), g(&[]));
        assert_eq!(m("[\\-a]+", "\\]^a"), g(&[]));
        assert_eq!(m("[a-]+", "a-"), g(&[]));
        assert_eq!(m("[-a]+", "a-"), g(&[]));
        assert_eq!(m("[ab-]+", "-ab"), g(&[]));
        assert_eq!(m("[--0]+", "-./0"), g(&[]));
        assert_eq!(m("[!--]+", "!-,"), g(&[]));
        assert_eq!(m("[a-a]", "a"), g(&[]));
        assert_eq!(m("[[]+", "[["), g(&[]));
        assert_eq!(m("[a[]+", "[a"), g(&[]));
        assert_eq!(m("[.]", "a"), None);
        assert_eq!(m("[*+?{]+", "*+?{"), g(&[]));
        assert_eq!(m("[$^]+", "^$"), g(&[]));
        assert_eq!(m("[^^]", "^"), None);
        assert_eq!(m("[a^]+", "^a"), g(&[]));
        assert_eq!(m("[|()]+", "|()"), g(&[]));
        assert_eq!(m("[^a]", "\n"), g(&[]));
        assert_eq!(m(".", "\n"), g(&[]));
    }

    #[test]
    fn classes() {
        assert_eq!(m("[[:alpha:]]+", "abcZ"), g(&[]));
        assert_eq!(m("[[:ALPHA:]]+", "ab"), g(&[]));
        assert_eq!(m("[[:Digit:]]+", "12"), g(&[]));
        assert_eq!(m("[[:w:]]+", "a_1"), g(&[]));
        assert_eq!(m("[[:d:]]+", "12"), g(&[]));
        assert_eq!(m("[[:s:]]+", " "), g(&[]));
        assert_eq!(m("[[:space:]]+", " \t\n\r\x0c\x0b"), g(&[]));
        assert_eq!(m("[[:blank:]]+", " \t"), g(&[]));
        assert_eq!(m("[[:blank:]]", "\n"), None);
        assert_eq!(m("[[:cntrl:]]+", "\x01\x1f\x7f"), g(&[]));
        assert_eq!(m("[[:punct:]]+", "!/:@[`{~"), g(&[]));
        assert_eq!(m("[[:graph:]]", " "), None);
        assert_eq!(m("[[:print:]]", " "), g(&[]));
        assert_eq!(m("[[:xdigit:]]+", "09afAF"), g(&[]));
        assert_eq!(m("[[:xdigit:]]", "g"), None);
        assert_eq!(m("[[:upper:][:digit:]]+", "A1"), g(&[]));
        assert_eq!(m("[^[:upper:]]+", "ab"), g(&[]));
        assert_eq!(m("[[:alpha:]0-9]+", "a9"), g(&[]));
        // "C" locale: nothing outside ASCII is in any class.
        assert_eq!(m("[[:alpha:]]+", "é"), None);
        assert_eq!(m("[[:print:]]+", "é"), None);
    }

    #[test]
    fn collating_elements() {
        assert_eq!(m("[[.a.]]", "a"), g(&[]));
        assert_eq!(m("[[.a.]-c]+", "abc"), g(&[]));
        assert_eq!(m("[[.hyphen.]]", "-"), g(&[]));
        assert_eq!(m("[[.space.]]", " "), g(&[]));
        assert_eq!(m("[[.zero.]]", "0"), g(&[]));
        assert_eq!(m("[[.tab.]]", "\t"), g(&[]));
        assert_eq!(m("[[.NUL.]]", "a"), None);
        assert_eq!(m("[[.left-square-bracket.]]", "["), g(&[]));
        assert_eq!(m("[[.backslash.]]", "\\"), g(&[]));
        assert_eq!(m("[[.underscore.]]", "_"), g(&[]));
        assert_eq!(m("[[.period.]]", "."), g(&[]));
        assert_eq!(m("[[=a=]]", "a"), g(&[]));
        for (i, name) in COLLATING_NAMES.iter().enumerate().skip(1) {
            let ch = (i as u8 as char).to_string();
            assert_eq!(m(&format!("[[.{name}.]]"), &ch), g(&[]), "{name}");
        }
    }

    #[test]
    fn byte_semantics() {
        assert_eq!(m(".", "é"), None);
        assert_eq!(m("..", "é"), g(&[]));
        assert_eq!(m("[é]", "é"), None);
        assert_eq!(m("[é]+", "é"), g(&[]));
        assert_eq!(m("[^a]", "é"), None);
        assert_eq!(m("[^a]+", "é"), g(&[]));
        assert_eq!(m("é", "é"), g(&[]));
        assert_eq!(m("(é)", "é"), g(&[Some("é")]));
        // Groups cut inside a character are converted lossily.
        assert_eq!(m("(.)(.)", "é"), g(&[Some("\u{FFFD}"), Some("\u{FFFD}")]));
        // Signed-char ranges: high bytes sort before ASCII.
        invalid("[a-é]");
    }

    #[test]
    fn split_matches_nix() {
        let cases: &[(&str, &str, &str)] = &[
            ("a|ab", "abc", r#"["",[],"c"]"#),
            ("(a)|b", "abc", r#"["",["a"],"",[null],"c"]"#),
            ("", "abc", r#"["",[],"a",[],"b",[],"c",[],""]"#),
            ("x*", "axb", r#"["",[],"a",[],"",[],"b",[],""]"#),
            ("x*", "", r#"["",[],""]"#),
            ("(x*)", "xaxx", r#"["",["x"],"",[""],"a",["xx"],"",[""],""]"#),
            ("a", "", r#"[""]"#),
            (",", "a,b,,c,", r#"["a",[],"b",[],"",[],"c",[],""]"#),
            ("(,)", "a,b", r#"["a",[","],"b"]"#),
            ("^", "abc", r#"["",[],"abc"]"#),
            ("$", "abc", r#"["abc",[],""]"#),
            ("^a", "aaa", r#"["",[],"aa"]"#),
            ("a*", "baaac", r#"["",[],"b",[],"",[],"c",[],""]"#),
            ("b*", "abc", r#"["",[],"a",[],"",[],"c",[],""]"#),
            ("(a|b)*", "xabx", r#"["",[null],"x",["b"],"",[null],"x",[null],""]"#),
            ("(a)?b", "bab", r#"["",[null],"",["a"],""]"#),
            (".", "é", r#"["",[],"",[],""]"#),
            ("^|a", "abc", r#"["",[],"bc"]"#),
            ("a$|b", "abab", r#"["a",[],"a",[],""]"#),
            ("(a)(b)?", "aab", r#"["",["a",null],"",["a","b"],""]"#),
            ("[[:space:]]+", " a  b ", r#"["",[],"a",[],"b",[],""]"#),
            ("(\\.|-)", "1.2-3", r#"["1",["."],"2",["-"],"3"]"#),
            ("a?", "ba", r#"["",[],"b",[],"",[],""]"#),
            ("é", "aéb", r#"["a",[],"b"]"#),
            ("[0-9]+|[0-9]+\\.[0-9]+", "v1.5x", r#"["v",[],"x"]"#),
        ];
        for &(re, s, want) in cases {
            assert_eq!(sp(re, s), want, "split {re:?} {s:?}");
        }
    }

    #[test]
    fn deep_nesting_is_bounded() {
        // Runs on the test harness's small (2 MiB) thread stack, in debug.
        let n = 63;
        let p = "(".repeat(n) + "a" + &")".repeat(n);
        let re = NixRegex::compile(&p).unwrap();
        let mut want = vec![Some("a")];
        want.resize(n, Some("a"));
        assert_eq!(re.full_match("a"), g(&want));
        let p = "a".to_string() + &"*".repeat(126);
        assert_eq!(NixRegex::compile(&p).unwrap().full_match("aaa"), g(&[]));
        let p = "(a|".repeat(40) + &")".repeat(40);
        assert!(NixRegex::compile(&p).is_ok());
        assert!(NixRegex::compile(&("(".repeat(65) + &")".repeat(65))).is_err());
        assert!(NixRegex::compile(&("a".to_string() + &"*".repeat(128))).is_err());
        // Past the limit: an error, not a stack overflow.
        for p in ["(".repeat(100_000) + "a" + &")".repeat(100_000), "a".to_string() + &"*".repeat(100_000)] {
            let e = NixRegex::compile(&p).unwrap_err();
            assert!(e.contains("nested deeper"), "{}", &e[e.len() - 40..]);
        }
    }

    #[test]
    fn reuse_and_group_count() {
        let re = NixRegex::compile("(a)(b(c))?").unwrap();
        assert_eq!(re.group_count(), 3);
        assert_eq!(re.pattern(), "(a)(b(c))?");
        assert_eq!(re.full_match("a"), g(&[Some("a"), None, None]));
        assert_eq!(re.full_match("abc"), g(&[Some("a"), Some("bc"), Some("c")]));
        assert_eq!(re.full_match("ab"), None);
    }

    #[test]
    fn long_inputs_do_not_blow_up() {
        // Deep backtracking stack: falls back to the automata (where Nix
        // reports a stack overflow at this size).
        let big = "a".repeat(1_000_000);
        let re = NixRegex::compile("(.*)x").unwrap();
        assert_eq!(re.full_match(&big), None);
        let re = NixRegex::compile("(.*)").unwrap();
        assert_eq!(re.full_match(&big).map(|g| g[0].as_ref().map(|s| s.len())), Some(Some(1_000_000)));
        let s = "ab".repeat(50_000);
        let re = NixRegex::compile("(a|b)*").unwrap();
        assert_eq!(re.full_match(&s), g(&[Some("b")]));
        let re = NixRegex::compile("b").unwrap();
        assert_eq!(re.split(&s).len(), 2 * 50_000 + 1);
        // Classic catastrophic-backtracking shape stays linear here.
        let re = NixRegex::compile("(a*)*b").unwrap();
        assert_eq!(re.full_match(&"a".repeat(10_000)), None);
    }

    /// libstdc++ quirks, with Nix 2.8's answers.
    #[test]
    fn libstdcxx_quirks() {
        // A greedy `a?` is not retried once anything matched.
        assert_eq!(sp("a?(ab)?", "ab"), r#"["",[null],"",[null],"b",[null],""]"#);
        assert_eq!(
            sp("b+([^a]{2})?||", "bbcaca"),
            r#"["",[null],"",[null],"c",[null],"a",[null],"c",[null],"a",[null],""]"#
        );
        // The extra empty iteration.
        assert_eq!(m("(a*)*", "aa"), g(&[Some("")]));
        assert_eq!(m("(a*)+b", "aab"), g(&[Some("")]));
        assert_eq!(m("(a|)*", "aa"), g(&[Some("")]));
        assert_eq!(m("(a?)*", "aa"), g(&[Some("")]));
        assert_eq!(m("(a*|b)*", "ab"), g(&[Some("")]));
        assert_eq!(m("(()|a)*", "a"), g(&[Some(""), Some("")]));
        assert_eq!(m("(a*)*(b)", "aab"), g(&[Some(""), Some("b")]));
        assert_eq!(m("(a*){2}", "aa"), g(&[Some("")]));
        assert_eq!(m("(a*){2,3}", "aa"), g(&[Some("")]));
        assert_eq!(m("a(a{0,1}b{0,1})*|", "aaaa"), g(&[Some("")]));
        assert_eq!(sp("(a*)*", "aa"), r#"["",[""],"",[""],""]"#);
        assert_eq!(sp("(x*)", "xaxx"), r#"["",["x"],"",[""],"a",["xx"],"",[""],""]"#);
        assert_eq!(
            sp("|(c|[^a](|([ab]).+a?)*)", "acbacc"),
            r#"["",[null,null,null],"a",["cbacc","","b"],"",[null,null,null],""]"#
        );
    }

    /// Past the step budget the automata answer, without the quirks. Nix
    /// needs about nine seconds here and answers `["","",null,null,"c",""]`.
    #[test]
    fn budget_fallback() {
        let re = NixRegex::compile("((|)+|((^é*[^a]){0,}a)+|[^ab.]?(().a*?)){2,}").unwrap();
        assert_eq!(re.full_match("ébéccaac"), g(&[Some("c"), Some(""), None, None, Some("c"), Some("")]));
    }
}
