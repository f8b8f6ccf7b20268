//! Upload chunks that come back. An upload reads its source into buffers
//! of [`UPLOAD_CHUNK`] bytes and hands each to the transport as `Bytes`;
//! once the transport has sent every piece of one and let go of it, the
//! pool gives it out again. A first converge streams gigabytes: taking a
//! fresh buffer per chunk had the kernel zero a new page for every 4 KiB
//! sent (the largest item in a profile of the deployer while pushing), and
//! the allocator's freed chunks of many streams added to its peak. The
//! first chunks are small and each new one twice the last, up to
//! [`UPLOAD_CHUNK`]: most uploads are a secret or a manifest of a few
//! KiB, and need not touch a quarter MiB of fresh memory each.

use bytes::{Bytes, BytesMut};

use super::host::UPLOAD_CHUNK;

/// Buffers one upload keeps handles to: the chunks in flight (the
/// transport's queue holds two) and one being filled, with one to spare.
const HELD: usize = 4;

/// The size of an upload's first chunk.
const FIRST_CHUNK: usize = 16 * 1024;

/// The buffers of one upload.
pub struct ChunkPool {
    /// Handles to chunks given out; a chunk whose only handle is here is
    /// free again.
    held: Vec<Bytes>,
    /// The size of the next chunk.
    size: usize,
}

impl Default for ChunkPool {
    fn default() -> Self {
        ChunkPool { held: Vec::new(), size: FIRST_CHUNK }
    }
}

impl ChunkPool {
    /// A buffer to read the next chunk into, its length the chunk's size
    /// (its bytes are whatever it held): one the transport has let go
    /// of, or a new one.
    pub fn take(&mut self) -> BytesMut {
        let size = self.size;
        self.size = (size * 2).min(UPLOAD_CHUNK);
        while let Some(i) = self.held.iter().position(Bytes::is_unique) {
            if let Ok(mut m) = self.held.swap_remove(i).try_into_mut() {
                if m.capacity() >= size {
                    m.clear();
                    m.resize(size, 0);
                    return m;
                }
            }
        }
        let mut m = BytesMut::with_capacity(size);
        m.resize(size, 0);
        m
    }

    /// `buf`, ready to send; the pool keeps a handle to take it back
    /// once the transport is done with it.
    pub fn give(&mut self, buf: BytesMut) -> Bytes {
        let b = buf.freeze();
        if self.held.len() < HELD {
            self.held.push(b.clone());
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_grow_from_small_to_the_upload_chunk() {
        let mut pool = ChunkPool::default();
        let sizes: Vec<usize> = (0..7).map(|_| pool.take().len()).collect();
        assert_eq!(sizes, [16, 32, 64, 128, 256, 256, 256].map(|k| k * 1024));
    }

    #[test]
    fn a_chunk_the_transport_dropped_is_given_out_again() {
        let mut pool = ChunkPool { size: UPLOAD_CHUNK, ..ChunkPool::default() };
        let a = pool.take();
        let sent = pool.give(a);
        let at = sent.as_ptr();
        let piece = sent.slice(100..200);
        drop(sent);
        // a piece still queued in the transport: the chunk is not free
        let b = pool.take();
        assert_ne!(b.as_ptr(), at);
        drop(piece);
        let c = pool.take();
        assert_eq!(c.as_ptr(), at);
        assert_eq!(c.len(), UPLOAD_CHUNK);
    }

    #[test]
    fn the_pool_holds_a_bounded_number_of_chunks() {
        let mut pool = ChunkPool::default();
        let mut in_flight = Vec::new();
        for _ in 0..10 {
            let b = pool.take();
            in_flight.push(pool.give(b));
        }
        assert_eq!(pool.held.len(), HELD);
    }
}
