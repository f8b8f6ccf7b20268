//! The parser: turns a series of tokens into an rnix syntax tree. rnix
//! 0.15.1's parser (MIT, see `LICENSE-rnix`) with two changes:
//!
//! - Trees are built by [`Builder`], which makes each green node once from
//!   its children. rowan's `GreenNodeBuilder` interns small nodes in a hash
//!   table that re-hashes whole subtrees whenever it grows, so a deep tree
//!   (`[[[[…]]]]`, `- - - 1`, `f 1 1 1 …`, `1+1+1…`) took time quadratic in
//!   its depth: 100000 levels took minutes.
//! - Every way the tree gets deeper counts towards one nesting depth,
//!   bounded by [`MAX_NESTING`]; rnix bounded only `parse_expr` (at 512),
//!   so nested lists, unary operators, right-associative operators (`++`,
//!   `//`, `->`) and `or` defaults recursed without bound, and chains of
//!   left-associative operators and arguments (`1+1+…`, `f 1 1 …`), which
//!   it parses in a loop, made trees as deep as they are long (which
//!   lowering, evaluation and dropping the tree then recurse over). Past
//!   the bound the rest of the input becomes an error node, as rnix does,
//!   and [`Parsed::too_deep`] says where. Each level may also grow the
//!   stack on the heap (`stacker`).
//!
//! Within the bound it builds exactly rnix's trees (tested against it).

use std::collections::{HashMap, VecDeque};

use rnix::{
    NixLanguage, ParseError,
    SyntaxKind::{self, *},
    T,
};
use rowan::{GreenNode, GreenToken, Language, NodeOrToken, TextRange, TextSize};

use super::tokenizer::Token;

/// How deeply constructs may nest: each bracket, each `let`/`with`/`if`/
/// `assert`/function body, each attribute value, each interpolation, each
/// unary operator, and each operator or argument of a chain (`a ++ b ++
/// c`, `1 + 2 + 3`, `f x y`) is one level. Nix 2.8's parser gives up
/// ("memory exhausted") between 5000 and 10000 levels of nesting, but
/// takes left-associative chains of any length; kdeploy counts those too,
/// since evaluating one recurses as deeply as it is long.
pub const MAX_NESTING: u32 = 10_000;

/// A set of token kinds (rnix's is private to it).
#[derive(Clone, Copy)]
struct TokenSet(u128);

impl TokenSet {
    const fn from_slice(kinds: &[SyntaxKind]) -> TokenSet {
        let mut res = 0u128;
        let mut i = 0;
        while i < kinds.len() {
            res |= 1u128 << (kinds[i] as usize);
            i += 1
        }
        TokenSet(res)
    }

    const fn contains(&self, kind: SyntaxKind) -> bool {
        self.0 & (1u128 << (kind as usize)) != 0
    }
}

/// Where a node may start later: an index into the children being built.
#[derive(Clone, Copy)]
struct Checkpoint(usize);

/// A green tree builder that makes every node once, in time linear in its
/// children (rowan's `GreenNodeBuilder` without its node cache). Equal
/// tokens are still shared.
struct Builder<'a> {
    parents: Vec<(SyntaxKind, usize)>,
    children: Vec<NodeOrToken<GreenNode, GreenToken>>,
    tokens: HashMap<(SyntaxKind, &'a str), GreenToken>,
}

impl<'a> Builder<'a> {
    fn new() -> Self {
        Builder { parents: Vec::new(), children: Vec::new(), tokens: HashMap::new() }
    }
    fn token(&mut self, kind: SyntaxKind, text: &'a str) {
        let t = self
            .tokens
            .entry((kind, text))
            .or_insert_with(|| GreenToken::new(NixLanguage::kind_to_raw(kind), text))
            .clone();
        self.children.push(NodeOrToken::Token(t));
    }
    fn start_node(&mut self, kind: SyntaxKind) {
        self.parents.push((kind, self.children.len()));
    }
    fn checkpoint(&self) -> Checkpoint {
        Checkpoint(self.children.len())
    }
    fn start_node_at(&mut self, checkpoint: Checkpoint, kind: SyntaxKind) {
        debug_assert!(checkpoint.0 <= self.children.len());
        debug_assert!(self.parents.last().is_none_or(|&(_, first)| checkpoint.0 >= first));
        self.parents.push((kind, checkpoint.0));
    }
    fn finish_node(&mut self) {
        let (kind, first) = self.parents.pop().expect("finish_node without start_node");
        let node = GreenNode::new(NixLanguage::kind_to_raw(kind), self.children.drain(first..));
        self.children.push(NodeOrToken::Node(node));
    }
    fn finish(mut self) -> GreenNode {
        debug_assert!(self.parents.is_empty() && self.children.len() == 1);
        match self.children.pop() {
            Some(NodeOrToken::Node(n)) => n,
            _ => unreachable!("the root is a node"),
        }
    }
}

struct Parser<'a, I>
where
    I: Iterator<Item = Token<'a>>,
{
    builder: Builder<'a>,
    errors: Vec<ParseError>,

    trivia_buffer: Vec<Token<'a>>,
    buffer: VecDeque<Token<'a>>,
    iter: I,
    consumed: TextSize,

    // Recursion depth, used for avoiding stack overflows. This may be incremented
    // by any method as long as it is decremented when that method returns.
    depth: u32,
    /// The token at which the nesting first went past [`MAX_NESTING`].
    too_deep: Option<TextRange>,
}
impl<'a, I> Parser<'a, I>
where
    I: Iterator<Item = Token<'a>>,
{
    fn new(iter: I) -> Self {
        Self {
            builder: Builder::new(),
            errors: Vec::new(),

            trivia_buffer: Vec::with_capacity(1),
            buffer: VecDeque::with_capacity(1),
            iter,
            consumed: TextSize::from(0),

            depth: 0,
            too_deep: None,
        }
    }

    fn get_text_position(&self) -> TextSize {
        self.consumed
    }

    fn peek_raw(&mut self) -> Option<&Token<'a>> {
        if self.buffer.is_empty() {
            if let Some(token) = self.iter.next() {
                self.buffer.push_back(token);
            }
        }
        self.buffer.front()
    }
    fn drain_trivia_buffer(&mut self) {
        for (t, s) in self.trivia_buffer.drain(..) {
            self.consumed += TextSize::of(s);
            self.builder.token(t, s);
        }
    }
    fn eat_trivia(&mut self) {
        self.peek();
        self.drain_trivia_buffer();
    }
    fn start_node(&mut self, kind: SyntaxKind) {
        self.eat_trivia();
        self.builder.start_node(kind);
    }
    fn checkpoint(&mut self) -> Checkpoint {
        self.eat_trivia();
        self.builder.checkpoint()
    }
    fn start_node_at(&mut self, checkpoint: Checkpoint, kind: SyntaxKind) {
        self.builder.start_node_at(checkpoint, kind);
    }
    fn finish_node(&mut self) {
        self.builder.finish_node();
    }
    fn start_error_node(&mut self) -> TextSize {
        self.start_node(NODE_ERROR);
        self.get_text_position()
    }
    fn finish_error_node(&mut self) -> TextSize {
        self.finish_node();
        self.get_text_position()
    }
    fn bump(&mut self) {
        match self.try_next() {
            Some((token, s)) => {
                if token.is_trivia() {
                    self.trivia_buffer.push((token, s))
                } else {
                    self.drain_trivia_buffer();
                    self.manual_bump(s, token);
                }
            }
            None => self.errors.push(ParseError::UnexpectedEOF),
        }
    }
    fn try_next(&mut self) -> Option<Token<'a>> {
        self.buffer.pop_front().or_else(|| self.iter.next())
    }
    fn manual_bump(&mut self, s: &'a str, token: SyntaxKind) {
        self.consumed += TextSize::of(s);
        self.builder.token(token, s)
    }
    fn peek(&mut self) -> Option<SyntaxKind> {
        while self.peek_raw().map(|&(t, _)| t.is_trivia()).unwrap_or(false) {
            self.bump();
        }
        self.peek_ahead(0)
    }
    fn peek_ahead(&mut self, n: usize) -> Option<SyntaxKind> {
        let mut non_trivia_seen = 0;
        let mut cursor = 0;
        loop {
            if self.buffer.len() <= cursor {
                self.buffer.push_back(self.iter.next()?);
            }
            let kind = self.buffer[cursor].0;
            cursor += 1;
            if !kind.is_trivia() {
                if non_trivia_seen == n {
                    return Some(kind);
                }
                non_trivia_seen += 1;
            }
        }
    }
    fn expect_peek_any(&mut self, allowed_slice: &[SyntaxKind]) -> Option<SyntaxKind> {
        let allowed = TokenSet::from_slice(allowed_slice);

        let next = match self.peek() {
            None => None,
            Some(kind) if allowed.contains(kind) => Some(kind),
            Some(kind) => {
                let start = self.start_error_node();
                loop {
                    self.bump();
                    if self.peek().map(|kind| allowed.contains(kind)).unwrap_or(true) {
                        break;
                    }
                }
                let end = self.finish_error_node();
                self.errors.push(ParseError::UnexpectedWanted(
                    kind,
                    TextRange::new(start, end),
                    allowed_slice.to_vec().into_boxed_slice(),
                ));

                self.peek()
            }
        };
        if next.is_none() {
            self.errors.push(ParseError::UnexpectedEOFWanted(allowed_slice.to_vec().into_boxed_slice()));
        }
        next
    }
    fn expect(&mut self, expected: SyntaxKind) {
        if self.expect_peek_any(&[expected]).is_some() {
            self.bump();
        }
    }

    fn expect_ident(&mut self) {
        if self.expect_peek_any(&[TOKEN_IDENT]).is_some() {
            self.start_node(NODE_IDENT);
            self.bump();
            self.finish_node()
        }
    }

    fn parse_dynamic(&mut self) {
        self.start_node(NODE_DYNAMIC);
        self.bump();
        self.parse_expr();
        self.expect(TOKEN_INTERPOL_END);
        self.finish_node();
    }

    fn parse_string(&mut self) {
        self.start_node(NODE_STRING);
        self.expect(TOKEN_STRING_START);

        loop {
            match self.expect_peek_any(&[TOKEN_STRING_END, TOKEN_STRING_CONTENT, TOKEN_INTERPOL_START]) {
                Some(TOKEN_STRING_CONTENT) => self.bump(),
                Some(TOKEN_INTERPOL_START) => {
                    self.start_node(NODE_INTERPOL);
                    self.bump();
                    self.parse_expr();
                    self.expect(TOKEN_INTERPOL_END);
                    self.finish_node();
                }
                // handled by expect_peek_any
                _ => break,
            }
        }
        self.expect(TOKEN_STRING_END);

        self.finish_node();
    }
    fn parse_attr(&mut self) {
        match self.peek() {
            Some(TOKEN_INTERPOL_START) => self.parse_dynamic(),
            Some(TOKEN_STRING_START) => self.parse_string(),
            _ => {
                // NB: the tokenizer always emits TOKEN_IDENT for __curPos;
                // TOKEN_CUR_POS is included for completeness but cannot
                // currently be produced by the tokenizer.
                if self.expect_peek_any(&[TOKEN_IDENT, TOKEN_OR, TOKEN_CUR_POS]).is_some() {
                    self.start_node(NODE_IDENT);
                    let (_, s) = self.try_next().unwrap();
                    self.manual_bump(s, TOKEN_IDENT);
                    self.finish_node()
                }
            }
        }
    }
    fn parse_attrpath(&mut self) {
        self.start_node(NODE_ATTRPATH);
        loop {
            self.parse_attr();

            if self.peek() == Some(T![.]) {
                self.bump();
            } else {
                break;
            }
        }
        self.finish_node();
    }
    fn parse_pattern(&mut self, bound: bool) {
        if self.peek().map(|t| t == T!['}']).unwrap_or(true) {
            self.bump();
        } else {
            loop {
                match self.expect_peek_any(&[T!['}'], T![...], TOKEN_IDENT]) {
                    Some(T!['}']) => {
                        self.bump();
                        break;
                    }
                    Some(T![...]) => {
                        self.bump();
                        self.expect(T!['}']);
                        break;
                    }
                    Some(TOKEN_IDENT) => {
                        self.start_node(NODE_PAT_ENTRY);
                        self.expect_ident();
                        if let Some(T![?]) = self.peek() {
                            self.bump();
                            self.parse_expr();
                        }
                        self.finish_node();
                        match self.peek() {
                            Some(T![,]) => self.bump(),
                            _ => {
                                self.expect(T!['}']);
                                break;
                            }
                        }
                    }
                    // handled by expect_peek_any
                    _ => break,
                }
            }
        }

        if self.peek() == Some(T![@]) {
            let kind = if bound { NODE_ERROR } else { NODE_PAT_BIND };
            self.start_node(kind);
            let start = self.get_text_position();
            self.bump();
            self.expect_ident();
            let end = self.finish_error_node();
            if bound {
                self.errors.push(ParseError::UnexpectedDoubleBind(TextRange::new(start, end)));
            }
        }
    }
    fn parse_set(&mut self, until: SyntaxKind) {
        loop {
            match self.peek() {
                None => break,
                token if token == Some(until) => break,
                Some(T![inherit]) => {
                    self.start_node(NODE_INHERIT);
                    self.bump();

                    if self.peek() == Some(T!['(']) {
                        self.start_node(NODE_INHERIT_FROM);
                        self.bump();
                        self.parse_expr();
                        self.expect(T![')']);
                        self.finish_node();
                    }

                    loop {
                        match self.peek() {
                            Some(t) if t != T![;] => {
                                self.parse_attr();
                            }
                            Some(_) => {
                                break;
                            }
                            None => {
                                self.errors.push(ParseError::UnexpectedEOF);
                                break;
                            }
                        }
                    }

                    self.expect(T![;]);
                    self.finish_node();
                }
                Some(_) => {
                    self.start_node(NODE_ATTRPATH_VALUE);
                    self.parse_attrpath();
                    self.expect(T![=]);
                    self.parse_expr();
                    self.expect(T![;]);
                    self.finish_node();
                }
            }
        }
        self.bump(); // the final close, like '}'
    }

    fn parse_simple(&mut self) -> Checkpoint {
        let peek = match self.peek() {
            Some(it) => it,
            None => {
                self.errors.push(ParseError::UnexpectedEOF);
                // NB: we don't use `self.checkpoint()` here in order to avoid
                // eating the whitespace. The actual checkpoint doesn't matter
                // in this case and, ideally, should be returning `None`, but
                // that makes code slightly more complex for little real
                // benefit.
                return self.builder.checkpoint();
            }
        };
        let checkpoint = self.checkpoint();
        match peek {
            T!['('] => {
                self.start_node(NODE_PAREN);
                self.bump();
                self.parse_expr();
                self.bump();
                self.finish_node();
            }
            T![rec] => {
                self.start_node(NODE_ATTR_SET);
                self.bump();
                self.expect(T!['{']);
                self.parse_set(T!['}']);
                self.finish_node();
            }
            T!['{'] => {
                // Do a lookahead:
                let mut peek = [None, None];
                for i in &mut peek {
                    let mut token;
                    *i = loop {
                        token = self.iter.next();
                        let kind = token.as_ref().map(|&(t, _)| t);
                        if let Some(token) = token {
                            self.buffer.push_back(token);
                        }
                        if kind.map(|t| !t.is_trivia()).unwrap_or(true) {
                            break kind;
                        }
                    };
                }

                match peek {
                    [Some(TOKEN_IDENT), Some(T![,])]
                    | [Some(TOKEN_IDENT), Some(T![?])]
                    | [Some(TOKEN_IDENT), Some(T!['}'])]
                    | [Some(T![...]), Some(T!['}'])]
                    | [Some(T!['}']), Some(T![:])]
                    | [Some(T!['}']), Some(T![@])] => {
                        // This looks like a pattern
                        self.start_node(NODE_LAMBDA);

                        self.start_node(NODE_PATTERN);
                        self.bump();
                        self.parse_pattern(false);
                        self.finish_node();

                        self.expect(T![:]);
                        self.parse_expr();

                        self.finish_node();
                    }
                    _ => {
                        // This looks like a set
                        self.start_node(NODE_ATTR_SET);
                        self.bump();
                        self.parse_set(T!['}']);
                        self.finish_node();
                    }
                }
            }
            T!['['] => {
                self.start_node(NODE_LIST);
                self.bump();
                if self.enter() {
                    while self.peek().map(|t| t != T![']']).unwrap_or(false) {
                        grow(|| self.parse_simple());
                    }
                    self.leave();
                }
                self.bump();
                self.finish_node();
            }
            TOKEN_STRING_START => self.parse_string(),
            TOKEN_PATH_ABS | TOKEN_PATH_REL | TOKEN_PATH_HOME | TOKEN_PATH_SEARCH => {
                let node_kind = match self.peek().unwrap() {
                    TOKEN_PATH_ABS => NODE_PATH_ABS,
                    TOKEN_PATH_REL => NODE_PATH_REL,
                    TOKEN_PATH_HOME => NODE_PATH_HOME,
                    TOKEN_PATH_SEARCH => NODE_PATH_SEARCH,
                    _ => unreachable!(),
                };
                self.start_node(node_kind);
                self.bump();

                // Search paths (<nixpkgs>) don't support interpolation
                let is_search_path = node_kind == NODE_PATH_SEARCH;
                let is_complex_path = !is_search_path && self.peek() == Some(TOKEN_INTERPOL_START);

                if is_complex_path {
                    loop {
                        match self.peek_raw().map(|(t, _)| t) {
                            Some(TOKEN_PATH_ABS) | Some(TOKEN_PATH_REL) | Some(TOKEN_PATH_HOME) => self.bump(),
                            Some(TOKEN_INTERPOL_START) => {
                                self.start_node(NODE_INTERPOL);
                                self.bump();
                                self.parse_expr();
                                self.expect(TOKEN_INTERPOL_END);
                                self.finish_node();
                            }
                            _ => break,
                        }
                    }
                }
                self.finish_node();
            }
            t if t.is_literal() => {
                self.start_node(NODE_LITERAL);
                self.bump();
                self.finish_node();
            }
            TOKEN_IDENT => {
                let ident = self.peek_raw().map(|&(_, s)| s);

                match self.peek_ahead(1) {
                    Some(T![:]) => {
                        self.expect_ident();

                        self.start_node_at(checkpoint, NODE_LAMBDA);
                        self.start_node_at(checkpoint, NODE_IDENT_PARAM);
                        self.finish_node();
                        self.expect(T![:]);
                        self.parse_expr();
                        self.finish_node();
                    }
                    Some(T![@]) => {
                        self.expect_ident();

                        self.start_node_at(checkpoint, NODE_LAMBDA);
                        self.start_node_at(checkpoint, NODE_PATTERN);
                        self.start_node_at(checkpoint, NODE_PAT_BIND);
                        self.expect(T![@]);
                        self.finish_node(); // PatBind

                        self.expect(T!['{']);
                        self.parse_pattern(true);
                        self.finish_node(); // Pattern

                        self.expect(T![:]);
                        self.parse_expr();
                        self.finish_node(); // Lambda
                    }
                    _ if ident == Some("__curPos") => {
                        self.start_node(NODE_CUR_POS);
                        let (_, s) = self.try_next().unwrap();
                        self.manual_bump(s, TOKEN_CUR_POS);
                        self.finish_node();
                    }
                    _ => self.expect_ident(),
                }
            }
            kind => {
                let start = self.start_error_node();
                self.bump();
                let end = self.finish_error_node();
                self.errors.push(ParseError::UnexpectedWanted(
                    kind,
                    TextRange::new(start, end),
                    [T!['('], T![rec], T!['{'], T!['['], TOKEN_STRING_START, TOKEN_IDENT].to_vec().into_boxed_slice(),
                ));
            }
        };

        if self.peek() == Some(T![.]) {
            self.start_node_at(checkpoint, NODE_SELECT);
            self.bump();
            self.parse_attrpath();
            if self.peek() == Some(T![or]) {
                self.bump();
                if self.enter() {
                    grow(|| self.parse_simple());
                    self.leave();
                }
            }
            self.finish_node();

        // This seems weird, but it matches Nix's behavior.
        // If there is no "." but a "or" immediately followed a primary expression,
        // we construct a application node, with "or" parsed as an identifier,
        // ignoring the associativity of ancestor applications.
        // Eg.
        // "a b or c" => "((a (b or)) c)"
        // "or a" => fail
        } else if self.peek() == Some(T![or]) {
            self.start_node_at(checkpoint, NODE_APPLY);
            self.start_node(NODE_IDENT);
            let (_, s) = self.try_next().unwrap();
            self.manual_bump(s, TOKEN_IDENT);
            self.finish_node();
            self.finish_node();
        }

        checkpoint
    }
    fn parse_fn(&mut self) -> Checkpoint {
        let checkpoint = self.parse_simple();
        let mut links = 0;
        while self.peek().map(|t| t.is_fn_arg()).unwrap_or(false) {
            if !self.enter() {
                break;
            }
            links += 1;
            self.start_node_at(checkpoint, NODE_APPLY);
            self.parse_simple();
            self.finish_node();
        }
        self.depth -= links;
        checkpoint
    }
    fn parse_negate(&mut self) -> Checkpoint {
        if self.peek() == Some(T![-]) {
            let checkpoint = self.checkpoint();
            self.start_node(NODE_UNARY_OP);
            self.bump();
            if self.enter() {
                grow(|| self.parse_negate());
                self.leave();
            }
            self.finish_node();
            checkpoint
        } else {
            self.parse_fn()
        }
    }
    fn parse_non_assoc(&mut self, next: fn(&mut Self) -> Checkpoint, ops: TokenSet) -> Checkpoint {
        let checkpoint = next(self);
        if self.peek().map(|t| ops.contains(t)).unwrap_or(false) {
            self.start_node_at(checkpoint, NODE_BIN_OP);
            self.bump();
            next(self);
            self.finish_node();
        }
        checkpoint
    }
    fn parse_left_assoc(&mut self, next: fn(&mut Self) -> Checkpoint, ops: TokenSet) -> Checkpoint {
        let checkpoint = next(self);
        let mut links = 0;
        while self.peek().map(|t| ops.contains(t)).unwrap_or(false) {
            if !self.enter() {
                break;
            }
            links += 1;
            self.start_node_at(checkpoint, NODE_BIN_OP);
            self.bump();
            next(self);
            self.finish_node();
        }
        self.depth -= links;
        checkpoint
    }
    fn parse_right_assoc(&mut self, next: fn(&mut Self) -> Checkpoint, ops: TokenSet) -> Checkpoint {
        let checkpoint = next(self);
        if self.peek().map(|t| ops.contains(t)).unwrap_or(false) {
            self.start_node_at(checkpoint, NODE_BIN_OP);
            self.bump();
            if self.enter() {
                grow(|| self.parse_right_assoc(next, ops));
                self.leave();
            }
            self.finish_node();
        }
        checkpoint
    }
    fn parse_hasattr(&mut self) -> Checkpoint {
        let checkpoint = self.parse_negate();
        let mut links = 0;
        while self.peek().map(|t| t == T![?]).unwrap_or(false) {
            if !self.enter() {
                break;
            }
            links += 1;
            self.start_node_at(checkpoint, NODE_HAS_ATTR);
            self.bump();
            self.parse_attrpath();
            self.finish_node();
        }
        self.depth -= links;
        checkpoint
    }
    fn parse_concat(&mut self) -> Checkpoint {
        self.parse_right_assoc(Self::parse_hasattr, TokenSet::from_slice(&[T![++]]))
    }
    fn parse_mul(&mut self) -> Checkpoint {
        self.parse_left_assoc(Self::parse_concat, TokenSet::from_slice(&[T![*], T![/]]))
    }
    fn parse_add(&mut self) -> Checkpoint {
        self.parse_left_assoc(Self::parse_mul, TokenSet::from_slice(&[T![+], T![-]]))
    }
    fn parse_invert(&mut self) -> Checkpoint {
        if self.peek() == Some(TOKEN_INVERT) {
            let checkpoint = self.checkpoint();
            self.start_node(NODE_UNARY_OP);
            self.bump();
            if self.enter() {
                grow(|| self.parse_invert());
                self.leave();
            }
            self.finish_node();
            checkpoint
        } else {
            self.parse_add()
        }
    }
    fn parse_merge(&mut self) -> Checkpoint {
        self.parse_right_assoc(Self::parse_invert, TokenSet::from_slice(&[T!["//"]]))
    }
    fn parse_compare(&mut self) -> Checkpoint {
        self.parse_non_assoc(Self::parse_merge, TokenSet::from_slice(&[T![<], T![<=], T![>], T![>=]]))
    }
    fn parse_equal(&mut self) -> Checkpoint {
        self.parse_non_assoc(Self::parse_compare, TokenSet::from_slice(&[T![==], T![!=]]))
    }
    fn parse_and(&mut self) -> Checkpoint {
        self.parse_left_assoc(Self::parse_equal, TokenSet::from_slice(&[T![&&]]))
    }
    fn parse_or(&mut self) -> Checkpoint {
        self.parse_left_assoc(Self::parse_and, TokenSet::from_slice(&[T![||]]))
    }
    fn parse_implication(&mut self) -> Checkpoint {
        self.parse_right_assoc(Self::parse_or, TokenSet::from_slice(&[T![->]]))
    }
    #[inline(always)]
    fn parse_math(&mut self) -> Checkpoint {
        // Always point this to the lowest-level math function there is
        self.parse_implication()
    }
    fn parse_pipe_right(&mut self) -> Checkpoint {
        self.parse_left_assoc(Self::parse_math, TokenSet::from_slice(&[T!["|>"]]))
    }
    fn parse_pipe_left(&mut self) -> Checkpoint {
        self.parse_right_assoc(Self::parse_pipe_right, TokenSet::from_slice(&[T!["<|"]]))
    }
    /// Parse Nix code into an AST
    pub fn parse_expr(&mut self) -> Checkpoint {
        if !self.enter() {
            return self.checkpoint();
        }
        let out = grow(|| self.parse_expr_inner());
        self.leave();
        out
    }

    fn parse_expr_inner(&mut self) -> Checkpoint {
        let out = match self.peek() {
            Some(T![let]) => {
                let checkpoint = self.checkpoint();
                self.bump();

                if self.peek() == Some(T!['{']) {
                    self.start_node_at(checkpoint, NODE_LEGACY_LET);
                    self.bump();
                    self.parse_set(T!['}']);
                    self.finish_node();
                } else {
                    self.start_node_at(checkpoint, NODE_LET_IN);
                    self.parse_set(T![in]);
                    self.parse_expr();
                    self.finish_node();
                }
                checkpoint
            }
            Some(T![with]) => {
                let checkpoint = self.checkpoint();
                self.start_node(NODE_WITH);
                self.bump();
                self.parse_expr();
                self.expect(T![;]);
                self.parse_expr();
                self.finish_node();
                checkpoint
            }
            Some(T![if]) => {
                let checkpoint = self.checkpoint();
                self.start_node(NODE_IF_ELSE);
                self.bump();
                self.parse_expr();
                self.expect(T![then]);
                self.parse_expr();
                self.expect(TOKEN_ELSE);
                self.parse_expr();
                self.finish_node();
                checkpoint
            }
            Some(T![assert]) => {
                let checkpoint = self.checkpoint();
                self.start_node(NODE_ASSERT);
                self.bump();
                self.parse_expr();
                self.expect(T![;]);
                self.parse_expr();
                self.finish_node();
                checkpoint
            }
            _ => self.parse_pipe_left(),
        };
        out
    }

    /// Goes one level deeper, growing the stack if needed; past
    /// [`MAX_NESTING`] the rest of the input becomes an error node and this
    /// returns false (then there is no level to leave).
    fn enter(&mut self) -> bool {
        if self.depth >= MAX_NESTING {
            if self.too_deep.is_none() {
                self.peek();
                let start = self.consumed + self.trivia_buffer.iter().map(|(_, s)| TextSize::of(*s)).sum::<TextSize>();
                let len = self.buffer.front().map_or(TextSize::from(0), |(_, s)| TextSize::of(*s));
                self.too_deep = Some(TextRange::at(start, len));
            }
            self.errors.push(ParseError::RecursionLimitExceeded);
            // Consume tokens to the end of the file. Erroring without bumping might cause
            // infinite looping elsewhere.
            self.start_error_node();
            while self.peek().is_some() {
                self.bump()
            }
            self.finish_error_node();
            return false;
        }
        self.depth += 1;
        true
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }
}

/// Runs one level of the parser, on a new stack segment if this one is
/// nearly used up.
fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(128 * 1024, 4 * 1024 * 1024, f)
}

/// A parsed text: rnix's tree and errors, and where the nesting went past
/// [`MAX_NESTING`] (the error list then holds `RecursionLimitExceeded`).
pub struct Parsed {
    pub green: GreenNode,
    pub errors: Vec<ParseError>,
    pub too_deep: Option<TextRange>,
}

/// Parse tokens into an AST
pub fn parse<'s, I>(iter: I) -> Parsed
where
    I: Iterator<Item = Token<'s>>,
{
    let mut parser = Parser::new(iter);
    parser.builder.start_node(NODE_ROOT);
    parser.parse_expr();
    parser.eat_trivia();
    if parser.peek().is_some() {
        let start = parser.start_error_node();
        while parser.peek().is_some() {
            parser.bump();
        }
        let end = parser.finish_error_node();
        parser.errors.push(ParseError::UnexpectedExtra(TextRange::new(start, end)));
        parser.eat_trivia();
    }
    parser.builder.finish_node();
    Parsed { green: parser.builder.finish(), errors: parser.errors, too_deep: parser.too_deep }
}
