//! Shared slices and strings behind a pointer of one word: [`RcSlice`] and
//! [`RcStr`] keep their reference count and their length in the allocation,
//! before the elements, where `Rc<[T]>` and `Rc<str>` carry the length in
//! the pointer. A [`crate::value::Value`] holding a list or a string is then
//! two words, not three, and so is every thunk, list element and frame slot
//! that holds a value. Single-threaded, like `Rc`: neither is `Send` nor
//! `Sync` (the `NonNull` inside sees to that).

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::borrow::Borrow;
use std::cell::Cell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::{self, NonNull};

#[repr(C)]
struct Header {
    count: Cell<usize>,
    len: usize,
}

/// An immutable, reference-counted slice behind one pointer.
pub struct RcSlice<T> {
    ptr: NonNull<Header>,
    /// Owns `T`s (for the drop check).
    _owns: PhantomData<T>,
}

/// The allocation of a slice of `len` elements and where they start.
fn layout<T>(len: usize) -> (Layout, usize) {
    let elements = Layout::array::<T>(len).unwrap_or_else(|_| capacity_overflow());
    let (layout, offset) = Layout::new::<Header>().extend(elements).unwrap_or_else(|_| capacity_overflow());
    (layout.pad_to_align(), offset)
}

#[cold]
fn capacity_overflow() -> ! {
    panic!("a list or string too large to allocate")
}

impl<T> RcSlice<T> {
    /// A block for `len` elements, its count 1, its elements not written.
    fn allocate(len: usize) -> NonNull<Header> {
        let (layout, _) = layout::<T>(len);
        // SAFETY: the layout is never of size zero (it holds the header).
        let raw = unsafe { alloc(layout) } as *mut Header;
        let Some(ptr) = NonNull::new(raw) else { handle_alloc_error(layout) };
        // SAFETY: `ptr` is a fresh block large and aligned enough for a header.
        unsafe { ptr.as_ptr().write(Header { count: Cell::new(1), len }) };
        ptr
    }

    /// Where the elements of the block at `ptr` start.
    #[inline(always)]
    fn data(ptr: NonNull<Header>) -> *mut T {
        let offset = layout::<T>(0).1;
        // SAFETY: the offset is within the block (the elements follow the
        // header; for no elements it is the block's padded end at most).
        unsafe { (ptr.as_ptr() as *mut u8).add(offset) as *mut T }
    }

    #[inline(always)]
    fn header(&self) -> &Header {
        // SAFETY: the block lives while this handle holds a count on it.
        unsafe { self.ptr.as_ref() }
    }

    /// Frees a block whose first `written` elements are initialised and
    /// nobody holds, dropping those elements.
    unsafe fn free(ptr: NonNull<Header>, len: usize, written: usize) {
        // SAFETY (caller): the first `written` elements are initialised and
        // the block was allocated for `len`.
        unsafe {
            ptr::drop_in_place(ptr::slice_from_raw_parts_mut(Self::data(ptr), written));
            dealloc(ptr.as_ptr() as *mut u8, layout::<T>(len).0);
        }
    }

    /// True when both share one block.
    #[inline(always)]
    pub fn ptr_eq(a: &RcSlice<T>, b: &RcSlice<T>) -> bool {
        a.ptr == b.ptr
    }

    /// The elements moved out of `v` into a new block.
    fn from_vec(mut v: Vec<T>) -> RcSlice<T> {
        let len = v.len();
        let ptr = Self::allocate(len);
        // SAFETY: the block has room for `len` elements, which are moved
        // (copied, and then forgotten by `set_len(0)`) out of the vector,
        // which frees only its buffer.
        unsafe {
            ptr::copy_nonoverlapping(v.as_ptr(), Self::data(ptr), len);
            v.set_len(0);
        }
        RcSlice { ptr, _owns: PhantomData }
    }

    /// The elements of an iterator that says exactly how many it has,
    /// written straight into the block; a wrong count goes through a vector.
    fn from_exact(len: usize, mut iter: impl Iterator<Item = T>) -> RcSlice<T> {
        /// Frees the block and what was written if the iterator panics.
        struct Partial<T> {
            ptr: NonNull<Header>,
            len: usize,
            written: usize,
            _owns: PhantomData<T>,
        }
        impl<T> Drop for Partial<T> {
            fn drop(&mut self) {
                // SAFETY: `written` elements were written into a block of `len`.
                unsafe { RcSlice::<T>::free(self.ptr, self.len, self.written) }
            }
        }
        let mut partial = Partial::<T> { ptr: Self::allocate(len), len, written: 0, _owns: PhantomData };
        let data = Self::data(partial.ptr);
        while partial.written < len {
            let Some(item) = iter.next() else { break };
            // SAFETY: `written < len`: within the block, not written before.
            unsafe { data.add(partial.written).write(item) };
            partial.written += 1;
        }
        if partial.written == len {
            if let Some(extra) = iter.next() {
                return Self::respill(partial.ptr, Some(extra), iter, &mut partial.written);
            }
            let ptr = partial.ptr;
            std::mem::forget(partial);
            return RcSlice { ptr, _owns: PhantomData };
        }
        Self::respill(partial.ptr, None, iter, &mut partial.written)
    }

    /// The iterator did not have the count it gave: the elements written
    /// so far, then the rest, through a vector. `written` is set to 0 once
    /// the elements are moved out, so the caller's guard frees only the block.
    #[cold]
    fn respill(
        ptr: NonNull<Header>,
        extra: Option<T>,
        iter: impl Iterator<Item = T>,
        written: &mut usize,
    ) -> RcSlice<T> {
        let mut v = Vec::with_capacity(*written + 1);
        // SAFETY: the first `written` elements are initialised; they are
        // moved into the vector and no longer counted as written, so the
        // guard does not drop them again.
        unsafe {
            ptr::copy_nonoverlapping(Self::data(ptr), v.as_mut_ptr(), *written);
            v.set_len(*written);
        }
        *written = 0;
        v.extend(extra);
        v.extend(iter);
        Self::from_vec(v)
    }
}

impl<T: Copy> RcSlice<T> {
    /// A copy of `items` in a new block.
    #[inline]
    pub fn copy_of(items: &[T]) -> RcSlice<T> {
        let ptr = Self::allocate(items.len());
        // SAFETY: the block has room for `items.len()` elements; `T: Copy`
        // has no drop to skip.
        unsafe { ptr::copy_nonoverlapping(items.as_ptr(), Self::data(ptr), items.len()) };
        RcSlice { ptr, _owns: PhantomData }
    }

    /// `a` and then `b`, copied once into a new block.
    #[inline]
    pub fn concat(a: &[T], b: &[T]) -> RcSlice<T> {
        let len = a.len().checked_add(b.len()).unwrap_or_else(|| capacity_overflow());
        let ptr = Self::allocate(len);
        // SAFETY: the block has room for `a.len() + b.len()` elements,
        // written one after the other; `T: Copy` has no drop to skip.
        unsafe {
            let at = Self::data(ptr);
            ptr::copy_nonoverlapping(a.as_ptr(), at, a.len());
            ptr::copy_nonoverlapping(b.as_ptr(), at.add(a.len()), b.len());
        }
        RcSlice { ptr, _owns: PhantomData }
    }
}

impl<T> Deref for RcSlice<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: the block holds `len` initialised elements, alive while
        // this handle holds a count on it, and never written again.
        unsafe { std::slice::from_raw_parts(Self::data(self.ptr), self.header().len) }
    }
}

impl<T> Clone for RcSlice<T> {
    #[inline(always)]
    fn clone(&self) -> RcSlice<T> {
        let count = &self.header().count;
        // Cannot overflow before memory runs out of handles, but as `Rc`
        // does, abort rather than wrap.
        let n = count.get().wrapping_add(1);
        if n == 0 {
            std::process::abort();
        }
        count.set(n);
        RcSlice { ptr: self.ptr, _owns: PhantomData }
    }
}

impl<T> Drop for RcSlice<T> {
    #[inline]
    fn drop(&mut self) {
        let count = &self.header().count;
        let n = count.get() - 1;
        count.set(n);
        if n == 0 {
            // SAFETY: this was the last handle.
            unsafe { Self::drop_slow(self.ptr) }
        }
    }
}

impl<T> RcSlice<T> {
    /// Frees a block its last handle let go of: out of line, as `Rc` does,
    /// so that the drop glue of what holds a handle stays small.
    ///
    /// # Safety
    /// No handle to the block is left.
    #[inline(never)]
    unsafe fn drop_slow(ptr: NonNull<Header>) {
        // SAFETY: the block is alive (its last handle is being dropped) and
        // holds `len` initialised elements nobody else can reach.
        unsafe {
            let len = ptr.as_ref().len;
            Self::free(ptr, len, len)
        }
    }
}

impl<T> From<Vec<T>> for RcSlice<T> {
    fn from(v: Vec<T>) -> RcSlice<T> {
        RcSlice::from_vec(v)
    }
}

impl<T: Clone> From<&[T]> for RcSlice<T> {
    fn from(s: &[T]) -> RcSlice<T> {
        RcSlice::from_exact(s.len(), s.iter().cloned())
    }
}

impl<T> FromIterator<T> for RcSlice<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> RcSlice<T> {
        let iter = iter.into_iter();
        match iter.size_hint() {
            (low, Some(high)) if low == high => RcSlice::from_exact(low, iter),
            _ => RcSlice::from_vec(iter.collect()),
        }
    }
}

impl<T> Default for RcSlice<T> {
    fn default() -> RcSlice<T> {
        RcSlice::from_vec(Vec::new())
    }
}

impl<T: fmt::Debug> fmt::Debug for RcSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// An immutable, reference-counted string behind one pointer: an
/// [`RcSlice`] of bytes that are always valid UTF-8.
#[derive(Clone, Default)]
pub struct RcStr(RcSlice<u8>);

impl RcStr {
    /// `a + b` copied once into the new string.
    pub fn concat(a: &str, b: &str) -> RcStr {
        RcStr(RcSlice::concat(a.as_bytes(), b.as_bytes()))
    }

    /// True when both share one block.
    #[inline(always)]
    pub fn ptr_eq(a: &RcStr, b: &RcStr) -> bool {
        RcSlice::ptr_eq(&a.0, &b.0)
    }

    #[inline(always)]
    pub fn as_str(&self) -> &str {
        self
    }
}

impl Deref for RcStr {
    type Target = str;

    #[inline(always)]
    fn deref(&self) -> &str {
        // SAFETY: every constructor copies valid UTF-8 (a `str` or the
        // concatenation of two), and the bytes are never written again.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }
}

impl From<&str> for RcStr {
    #[inline]
    fn from(s: &str) -> RcStr {
        RcStr(RcSlice::copy_of(s.as_bytes()))
    }
}

impl From<&String> for RcStr {
    fn from(s: &String) -> RcStr {
        RcStr::from(s.as_str())
    }
}

impl From<String> for RcStr {
    fn from(s: String) -> RcStr {
        RcStr::from(s.as_str())
    }
}

impl From<Box<str>> for RcStr {
    fn from(s: Box<str>) -> RcStr {
        RcStr::from(&*s)
    }
}

impl From<std::borrow::Cow<'_, str>> for RcStr {
    fn from(s: std::borrow::Cow<'_, str>) -> RcStr {
        RcStr::from(&*s)
    }
}

impl From<char> for RcStr {
    fn from(c: char) -> RcStr {
        RcStr::from(c.encode_utf8(&mut [0; 4]) as &str)
    }
}

impl AsRef<str> for RcStr {
    #[inline(always)]
    fn as_ref(&self) -> &str {
        self
    }
}

impl Borrow<str> for RcStr {
    #[inline(always)]
    fn borrow(&self) -> &str {
        self
    }
}

impl PartialEq for RcStr {
    #[inline]
    fn eq(&self, other: &RcStr) -> bool {
        RcStr::ptr_eq(self, other) || **self == **other
    }
}

impl Eq for RcStr {}

impl PartialEq<str> for RcStr {
    fn eq(&self, other: &str) -> bool {
        &**self == other
    }
}

impl PartialEq<&str> for RcStr {
    fn eq(&self, other: &&str) -> bool {
        &**self == *other
    }
}

impl PartialOrd for RcStr {
    fn partial_cmp(&self, other: &RcStr) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RcStr {
    fn cmp(&self, other: &RcStr) -> std::cmp::Ordering {
        (**self).cmp(&**other)
    }
}

/// The same hash as the `str` (what `Borrow<str>` lookups need).
impl Hash for RcStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

impl fmt::Debug for RcStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl fmt::Display for RcStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl serde::Serialize for RcStr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    /// Counts its drops through a shared counter.
    #[derive(Clone)]
    struct Counted(Rc<Cell<usize>>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn sizes_are_one_word() {
        assert_eq!(std::mem::size_of::<RcSlice<u64>>(), 8);
        assert_eq!(std::mem::size_of::<Option<RcStr>>(), 8);
    }

    #[test]
    fn elements_dropped_once_with_the_last_handle() {
        let drops = Rc::new(Cell::new(0));
        let s: RcSlice<Counted> = (0..5).map(|_| Counted(drops.clone())).collect();
        let t = s.clone();
        assert_eq!(t.len(), 5);
        drop(s);
        assert_eq!(drops.get(), 0);
        drop(t);
        assert_eq!(drops.get(), 5);
    }

    #[test]
    fn from_vec_slice_and_empty() {
        let drops = Rc::new(Cell::new(0));
        let v: Vec<Counted> = (0..3).map(|_| Counted(drops.clone())).collect();
        let s = RcSlice::from(v);
        let c = RcSlice::from(&s[1..]);
        assert_eq!(c.len(), 2);
        drop(s);
        assert_eq!(drops.get(), 3);
        drop(c);
        assert_eq!(drops.get(), 5);
        let e: RcSlice<Counted> = RcSlice::default();
        assert!(e.is_empty());
        let e2: RcSlice<u64> = std::iter::empty().collect();
        assert!(e2.is_empty());
    }

    /// An iterator whose count is wrong both ways goes through a vector
    /// with every element, dropping nothing twice.
    #[test]
    fn wrong_counts() {
        struct Lying(std::ops::Range<u64>, usize);
        impl Iterator for Lying {
            type Item = u64;
            fn next(&mut self) -> Option<u64> {
                self.0.next()
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                (self.1, Some(self.1))
            }
        }
        let short: RcSlice<u64> = Lying(0..3, 5).collect();
        assert_eq!(&*short, &[0, 1, 2]);
        let long: RcSlice<u64> = Lying(0..7, 2).collect();
        assert_eq!(&*long, &[0, 1, 2, 3, 4, 5, 6]);
        let drops = Rc::new(Cell::new(0));
        let d = drops.clone();
        struct LyingC(usize, Rc<Cell<usize>>);
        impl Iterator for LyingC {
            type Item = Counted;
            fn next(&mut self) -> Option<Counted> {
                (self.0 > 0).then(|| {
                    self.0 -= 1;
                    Counted(self.1.clone())
                })
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                (2, Some(2))
            }
        }
        let s: RcSlice<Counted> = LyingC(4, d).collect();
        assert_eq!(s.len(), 4);
        assert_eq!(drops.get(), 0);
        drop(s);
        assert_eq!(drops.get(), 4);
    }

    /// A panic in the middle of filling a block drops what was written.
    #[test]
    fn panic_while_filling() {
        let drops = Rc::new(Cell::new(0));
        let d = drops.clone();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _s: RcSlice<Counted> = (0..4)
                .map(|i| {
                    assert!(i < 2, "stop");
                    Counted(d.clone())
                })
                .collect();
        }));
        assert!(r.is_err());
        assert_eq!(drops.get(), 2);
    }

    #[test]
    fn strings() {
        let a = RcStr::from("héllo");
        let b = RcStr::concat(&a, " wörld");
        assert_eq!(&*b, "héllo wörld");
        assert_eq!(b.len(), "héllo wörld".len());
        assert_eq!(RcStr::from(""), RcStr::default());
        assert!(a < b);
        assert_eq!(a, RcStr::from(String::from("héllo")));
        let mut h = std::collections::HashSet::new();
        h.insert(a.clone());
        assert!(h.contains("héllo"));
        assert_eq!(format!("{a} {a:?}"), "héllo \"héllo\"");
    }
}
