//! The evaluating thread's stack backed by transparent huge pages. Deep
//! non-tail recursion (`1 + f (n - 1)` 60000 calls down) touches tens of
//! MiB of stack the first time down, one page fault per 4 KiB page: about a
//! tenth of such an evaluation's time went to those faults. The kernel
//! gives thread stacks small pages unless asked (a `MAP_STACK` mapping is
//! `VM_NOHUGEPAGE` since Linux 6.7); a process that disabled huge pages
//! (`PR_SET_THP_DISABLE`, as the deploy commands do) keeps them disabled.

use std::cell::Cell;

thread_local! {
    static ASKED: Cell<bool> = const { Cell::new(false) };
}

/// Asks, once per thread, for huge pages on this thread's stack. Only the
/// pages touched cost memory, rounded up to 2 MiB; failure changes nothing
/// but speed, so it is ignored.
pub(crate) fn prefer_huge_pages() {
    if ASKED.with(|a| a.replace(true)) {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: `attr` is initialised by pthread_getattr_np before it is read
    // and destroyed once; madvise only changes the paging advice of this
    // thread's own stack mapping.
    unsafe {
        let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return;
        }
        let mut addr = std::ptr::null_mut();
        let mut size = 0;
        let got = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size);
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        if got == 0 && size > 0 {
            libc::madvise(addr, size, libc::MADV_HUGEPAGE);
        }
    }
}
