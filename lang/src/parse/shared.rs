//! Syntax trees kept for other evaluators. Values hold `Rc`s and stay on
//! their thread, but rnix's syntax is rowan's green tree, which threads may
//! share: an evaluator evaluating the same files again on another thread
//! (a front end's helper) takes the trees this one made instead of parsing
//! the text again. A tree is kept only for a text that parsed without
//! errors, and found only for the same text.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rowan::ast::AstNode;

/// Green trees by the text they were parsed from; clones share the table.
#[derive(Clone, Default)]
pub struct Parses(Arc<Mutex<HashMap<Arc<str>, rowan::GreenNode>>>);

impl Parses {
    /// The tree of `text`, if an evaluator sharing this table parsed it.
    pub fn get(&self, text: &str) -> Option<rnix::Root> {
        let green = self.0.lock().ok()?.get(text)?.clone();
        rnix::Root::cast(rnix::SyntaxNode::new_root(green))
    }

    /// Keeps the tree parsed from `text`.
    pub fn insert(&self, text: &str, root: &rnix::Root) {
        if let Ok(mut table) = self.0.lock() {
            table.insert(text.into(), root.syntax().green().to_owned());
        }
    }
}
