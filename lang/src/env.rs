//! Runtime environments: one frame per `let`, `rec`, lambda call or `with`,
//! holding thunks in the slots that lowering assigned to each name, so a
//! variable lookup is a walk of known depth and an index, never a search.

use std::cell::RefCell;
use std::rc::Rc;

use smallvec::SmallVec;

use crate::thunk::Thunk;
use crate::value::Value;

/// Most frames (lambda calls, `with`) hold one or two slots: inline.
type Slots = SmallVec<[Thunk; 2]>;

pub struct Env {
    slots: RefCell<Slots>,
    parent: Option<Rc<Env>>,
}

impl Env {
    pub fn root() -> Rc<Env> {
        Rc::new(Env { slots: RefCell::new(SmallVec::new()), parent: None })
    }

    pub fn child(parent: &Rc<Env>, capacity: usize) -> Rc<Env> {
        Rc::new(Env { slots: RefCell::new(SmallVec::with_capacity(capacity)), parent: Some(parent.clone()) })
    }

    pub fn with_one(parent: &Rc<Env>, slot: Thunk) -> Rc<Env> {
        let mut slots = SmallVec::new();
        slots.push(slot);
        Rc::new(Env { slots: RefCell::new(slots), parent: Some(parent.clone()) })
    }

    pub fn push(&self, t: Thunk) {
        self.slots.borrow_mut().push(t);
    }

    /// Replaces a slot's thunk: only for a frame nobody else holds
    /// ([`crate::repeat`]).
    pub fn set(&self, index: usize, t: Thunk) {
        self.slots.borrow_mut()[index] = t;
    }

    /// True when this frame is the only holder of its parent.
    pub fn parent_unshared(&self) -> bool {
        self.parent.as_ref().is_some_and(|p| Rc::strong_count(p) == 1)
    }

    /// [`Self::set`] in the parent frame.
    pub fn set_in_parent(&self, index: usize, t: Thunk) {
        self.parent.as_ref().expect("checked by parent_unshared").set(index, t);
    }

    /// The value in a slot if it is already known; `None` also for a slot
    /// of a frame still being filled.
    pub fn peek(self: &Rc<Env>, depth: u32, index: u32) -> Option<Value> {
        self.inspect(depth, index, |v| Some(v.clone()))
    }

    /// [`Thunk::inspect`] of a slot; `None` also for a slot of a frame
    /// still being filled.
    #[inline(always)]
    pub fn inspect<R>(self: &Rc<Env>, depth: u32, index: u32, f: impl FnOnce(&Value) -> Option<R>) -> Option<R> {
        let mut env = self;
        for _ in 0..depth {
            env = env.parent.as_ref()?;
        }
        env.slots.borrow().get(index as usize)?.inspect(f)
    }

    /// A slot's value if it is known, else its thunk to force: one clone
    /// either way, not a thunk clone and then a value clone.
    #[inline(always)]
    pub fn get(self: &Rc<Env>, depth: u32, index: u32) -> Result<Value, Thunk> {
        let mut env = self;
        for _ in 0..depth {
            env = env.parent.as_ref().expect("lowering resolved a frame that exists");
        }
        let slots = env.slots.borrow();
        let t = &slots[index as usize];
        t.peek().ok_or_else(|| t.clone())
    }

    pub fn lookup(self: &Rc<Env>, depth: u32, index: u32) -> Thunk {
        let mut env = self;
        for _ in 0..depth {
            env = env.parent.as_ref().expect("lowering resolved a frame that exists");
        }
        env.slots.borrow()[index as usize].clone()
    }
}
