//! The process allocator: mimalloc, entered through its plain `malloc` for
//! the alignments it guarantees anyway, and tuned for evaluation.
//!
//! The `mimalloc` crate sends every request through `mi_malloc_aligned`,
//! whose extra checks cost ~9% of the evaluator's instructions on small
//! objects (measured with callgrind on `bench/lang/modules_config.nix`).

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// `mi_malloc` returns memory aligned to `max_align_t` (16 on the targets
/// we build for); larger alignments need the aligned entry points.
const MALLOC_ALIGN: usize = 16;

pub struct Mimalloc;

// SAFETY: every block comes from mimalloc and goes back to it; mimalloc
// frees aligned and unaligned blocks with the same `mi_free`.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: plain FFI calls; a null return is passed on as failure.
        unsafe {
            if layout.align() <= MALLOC_ALIGN {
                // The evaluator's objects (thunks, frames, sets) are small:
                // mimalloc's small entry skips a call and a size check.
                if layout.size() <= mi::MI_SMALL_SIZE_MAX {
                    mi::mi_malloc_small(layout.size()) as *mut u8
                } else {
                    mi::mi_malloc(layout.size()) as *mut u8
                }
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe {
            if layout.align() <= MALLOC_ALIGN {
                mi::mi_zalloc(layout.size()) as *mut u8
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` was returned by one of the functions above.
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; the alignment is kept.
        unsafe {
            if layout.align() <= MALLOC_ALIGN {
                mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

/// mimalloc's `mi_option_purge_delay` (its position in `mi_option_t`,
/// which the `libmimalloc-sys` bindings do not name).
const PURGE_DELAY: mi::mi_option_t = 15;

/// Keeps freed memory instead of handing it back to the OS and re-zeroing
/// it when it is taken again: up to half the run time of a large
/// evaluation. Not for the deploy commands, which stream blobs through
/// many short-lived buffers on several threads for seconds: handing freed
/// memory back keeps their peak low (a first converge of the lab: 83 MB
/// kept, 42-55 MB purged).
pub fn keep_freed_memory() {
    // SAFETY: sets one option value; mimalloc reads it at each purge.
    unsafe { mi::mi_option_set(PURGE_DELAY, -1) }
}

/// mimalloc's `mi_option_allow_thp` (as `PURGE_DELAY`, by position).
const ALLOW_THP: mi::mi_option_t = 43;

/// Backs the heap with 4 KiB pages only. mimalloc asks for transparent
/// huge pages on its arenas, and each 2 MiB page touched at all is 2 MiB
/// of memory: a deployer pushing to twenty nodes, its buffers spread over
/// twenty tasks and threads, was 70 of its 98 MB in huge pages. The
/// arena made before `main` is covered too: the kernel checks the
/// process's flag at each fault. Evaluation keeps huge pages (fewer TLB
/// misses over a heap it fills densely).
pub fn small_pages() {
    // SAFETY: sets one option value; a prctl with constant arguments.
    unsafe {
        mi::mi_option_set(ALLOW_THP, 0);
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
