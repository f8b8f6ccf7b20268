//! Runtime environments: one frame per `let`, `rec`, lambda call or `with`,
//! holding thunks in the slots that lowering assigned to each name, so a
//! variable lookup is a walk of known depth and an index, never a search.
//!
//! A function bound in a frame (`let f = x: …;`) closes over that frame:
//! held as a closure, it would make a reference cycle (frame → slot →
//! closure → frame) that reference counting never frees — every call of a
//! function with such a `let` would leak its frame. The slot holds only the
//! function's code and, weakly, the closure last made of it
//! ([`Slot::OwnLambda`]): a read returns that closure while someone holds
//! it, else makes it anew with the frame it was read from (which the
//! reader holds anyway).
//!
//! A frame's slots have no borrow flag (a `RefCell`'s cost a write to the
//! frame at every variable read, and 8 bytes that put a frame of two slots
//! past mimalloc's 64-byte blocks). What makes that sound: slots are
//! written only by [`Env::push`], [`Env::push_own_lambda`] and [`Env::set`],
//! and a reference into the slots ([`Env::thunk_at`], or the ones the
//! reads below take) never lives across a call that could reach one of
//! these: each read clones what it returns, or hands its caller a
//! reference that the caller uses to look at a value in place, running no
//! evaluation meanwhile (the users of `thunk_at` are in `eval.rs`,
//! `known.rs` and `guard.rs`, and only inspect values).

use std::cell::{Cell, UnsafeCell};
use std::rc::{Rc, Weak};

use smallvec::SmallVec;

use crate::ir::Lambda;
use crate::thunk::Thunk;
use crate::value::{Closure, Value};

/// Most frames (lambda calls, `with`) hold one or two slots: inline.
type Slots = SmallVec<[Slot; 2]>;

enum Slot {
    Thunk(Thunk),
    /// A function whose environment is this frame: boxed, so that a slot is
    /// two words like a thunk (a frame of two slots then takes 64 bytes
    /// with its counts); such slots are few.
    OwnLambda(Box<OwnFn>),
}

struct OwnFn {
    lambda: Rc<Lambda>,
    made: Cell<Weak<Closure>>,
}

pub struct Env {
    /// Written only as the module's header says.
    slots: UnsafeCell<Slots>,
    parent: Option<Rc<Env>>,
}

impl Env {
    pub fn root() -> Rc<Env> {
        Rc::new(Env { slots: UnsafeCell::new(SmallVec::new()), parent: None })
    }

    pub fn child(parent: &Rc<Env>, capacity: usize) -> Rc<Env> {
        Rc::new(Env { slots: UnsafeCell::new(SmallVec::with_capacity(capacity)), parent: Some(parent.clone()) })
    }

    pub fn with_one(parent: &Rc<Env>, slot: Thunk) -> Rc<Env> {
        let mut slots = SmallVec::new();
        slots.push(Slot::Thunk(slot));
        Rc::new(Env { slots: UnsafeCell::new(slots), parent: Some(parent.clone()) })
    }

    /// The slots, to read. The reference must not be held across a call
    /// that could write them (see the module's header).
    #[inline(always)]
    fn slots(&self) -> &Slots {
        // SAFETY: the only writers are `push`, `push_own_lambda` and `set`,
        // which are never called while a reference from here is alive:
        // every such reference is used by the read that took it, or by its
        // caller to look at a value in place, without evaluating anything
        // in between (the module's header lists where).
        unsafe { &*self.slots.get() }
    }

    /// The slots, to write: only from `push`, `push_own_lambda` and `set`.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    fn slots_mut(&self) -> &mut Slots {
        // SAFETY: called only by the three writers, each of which writes
        // and returns without running anything else; no reference from
        // `slots` is alive then (the module's header), so this one is the
        // only reference into the slots while it lives.
        unsafe { &mut *self.slots.get() }
    }

    /// Fills the next slot: only while the frame is being made (its maker
    /// pushes every slot before the frame is evaluated in). Crate-only, as
    /// every writer: the slots' soundness rests on the callers here.
    pub(crate) fn push(&self, t: Thunk) {
        self.slots_mut().push(Slot::Thunk(t));
    }

    /// Binds the next slot to a function closing over this frame.
    pub(crate) fn push_own_lambda(&self, l: Rc<Lambda>) {
        self.slots_mut().push(Slot::OwnLambda(Box::new(OwnFn { lambda: l, made: Cell::new(Weak::new()) })));
    }

    /// Replaces a slot's thunk: only for a frame nobody else holds
    /// ([`crate::repeat`]), or a `rec` set's frame with `__overrides` right
    /// after it was filled without reading any of its slots
    /// (`fill_frame_lazily`). The caller holds the frame through a
    /// reference of its own, not only through the slot replaced.
    #[inline]
    pub(crate) fn set(&self, index: usize, t: Thunk) {
        // The old slot is dropped after the write, outside the borrow: its
        // drop may free other frames, which runs no code that reads slots
        // (nothing in the crate implements Drop to evaluate), and cannot
        // free this one, which its caller holds.
        let old = std::mem::replace(&mut self.slots_mut()[index], Slot::Thunk(t));
        drop(old);
    }

    /// True when this frame is the only holder of its parent.
    pub fn parent_unshared(&self) -> bool {
        self.parent.as_ref().is_some_and(|p| Rc::strong_count(p) == 1)
    }

    /// [`Self::set`] in the parent frame.
    pub(crate) fn set_in_parent(&self, index: usize, t: Thunk) {
        self.parent.as_ref().expect("checked by parent_unshared").set(index, t);
    }

    /// The value in a slot if it is already known; `None` also for a slot
    /// of a frame still being filled.
    pub fn peek(self: &Rc<Env>, depth: u32, index: u32) -> Option<Value> {
        let env = self.up(depth)?;
        match env.slots().get(index as usize)? {
            Slot::Thunk(t) => t.peek(),
            Slot::OwnLambda(own) => Some(closure(&own.lambda, &own.made, env)),
        }
    }

    /// The thunk in a slot, to [`Thunk::inspect`] in place; `None` for a
    /// slot of a frame still being filled, and for a frame's own function:
    /// its value is a function, which no inspection looks into, and making
    /// its closure only to look would cost an allocation.
    #[inline(always)]
    pub(crate) fn thunk_at(self: &Rc<Env>, depth: u32, index: u32) -> Option<&Thunk> {
        let env = self.up(depth)?;
        match env.slots().get(index as usize)? {
            Slot::Thunk(t) => Some(t),
            Slot::OwnLambda(..) => None,
        }
    }

    /// The frame `depth` levels up.
    #[inline(always)]
    fn up(self: &Rc<Env>, depth: u32) -> Option<&Rc<Env>> {
        let mut env = self;
        for _ in 0..depth {
            env = env.parent.as_ref()?;
        }
        Some(env)
    }

    /// A slot's value if it is known, else its thunk to force: one clone
    /// either way, not a thunk clone and then a value clone.
    #[inline(always)]
    pub fn get(self: &Rc<Env>, depth: u32, index: u32) -> Result<Value, Thunk> {
        let mut env = self;
        for _ in 0..depth {
            env = env.parent.as_ref().expect("lowering resolved a frame that exists");
        }
        match &env.slots()[index as usize] {
            Slot::Thunk(t) => t.peek().ok_or_else(|| t.clone()),
            Slot::OwnLambda(own) => Ok(closure(&own.lambda, &own.made, env)),
        }
    }

    /// The code of a function bound in a frame and that frame, when the
    /// slot holds one of the frame's own functions: a call binds its
    /// argument under that frame directly, without making (and freeing)
    /// the closure a read would give.
    #[inline(always)]
    pub fn own_lambda(self: &Rc<Env>, depth: u32, index: u32) -> Option<(Rc<Lambda>, &Rc<Env>)> {
        let mut env = self;
        for _ in 0..depth {
            env = env.parent.as_ref().expect("lowering resolved a frame that exists");
        }
        match &env.slots()[index as usize] {
            Slot::OwnLambda(own) => Some((own.lambda.clone(), env)),
            Slot::Thunk(_) => None,
        }
    }

    /// Inlined into [`crate::eval::Evaluator::thunk`], its caller for
    /// every variable made a thunk: the call cost a quarter of the lookup.
    #[inline(always)]
    pub fn lookup(self: &Rc<Env>, depth: u32, index: u32) -> Thunk {
        let mut env = self;
        for _ in 0..depth {
            env = env.parent.as_ref().expect("lowering resolved a frame that exists");
        }
        match &env.slots()[index as usize] {
            Slot::Thunk(t) => t.clone(),
            Slot::OwnLambda(own) => Thunk::value(closure(&own.lambda, &own.made, env)),
        }
    }
}

/// The closure of a frame's own function: the one made last if it is still
/// alive (no allocation, and the same function is identical to itself).
fn closure(lambda: &Rc<Lambda>, made: &Cell<Weak<Closure>>, env: &Rc<Env>) -> Value {
    let last = made.take();
    let c = match last.upgrade() {
        Some(c) => c,
        None => Rc::new(Closure { lambda: lambda.clone(), env: env.clone() }),
    };
    made.set(Rc::downgrade(&c));
    Value::Lambda(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot is two words, and a frame with two slots inline fits in
    /// mimalloc's 64-byte blocks with its `Rc` counts (smallvec's `union`
    /// layout, no borrow flag).
    #[test]
    fn sizes() {
        assert_eq!(std::mem::size_of::<Slot>(), 16);
        assert_eq!(std::mem::size_of::<Env>(), 48);
    }
}
