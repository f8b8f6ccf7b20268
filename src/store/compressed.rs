//! Blobs compressed for transit, chunk by chunk: a large blob travels as a
//! run of zstd frames, one per [`CHUNK`] of its bytes, each either
//! compressed or stored (zstd's raw blocks, [`StoredFrame`]), so the node
//! decompresses the whole run with one `zstd -d` whichever each chunk is.
//! Compressors work ahead of the streams (`deploy/push.rs`); a stream that
//! reaches a chunk no compressor has started sends it stored rather than
//! wait, so a wire faster than the compressor (a first converge on a busy
//! machine) never idles, and a slower one gets every chunk compressed.
//! Compressed chunks are kept beside the store (`zstd/<blake3>/<i>.zst`)
//! for every node and every later run; a chunk that zstd does not shrink
//! by a tenth is remembered as such (`<i>.raw`, an empty marker). Nodes
//! check the sha256 of what they decompress, so a damaged chunk is refused
//! there, never admitted.

use std::fs;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use super::{Digest, Error, Result, Store};

/// zstd level: 1. On 130 MB of the lab's binaries it takes 0.45 s on one
/// core against level 3's 0.74 s, for 8% more bytes (53.8 MB against
/// 49.8 MB), and decompresses as fast. One thread per chunk: the deployer
/// compresses as many chunks at once as it has CPUs (`deploy/push.rs`).
const LEVEL: i32 = 1;

/// log2 of the compression window (see `compress`).
const WINDOW_LOG: u32 = 20;

/// The bytes of a blob compressed as one frame: large enough that
/// splitting costs well under 1% of the saving (the window is 1 MiB), small
/// enough that a stream waits for at most one chunk's compression (tens of
/// milliseconds) and decides compressed or stored often.
pub const CHUNK: u64 = 8 << 20;

/// How long a stream waits for a chunk being compressed before it sends
/// it stored: about twice what one chunk takes a free core at level 1.
pub const PATIENCE: Duration = Duration::from_millis(60);

/// Where one chunk of a blob stands in this run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// No compressor has started it.
    Pending,
    Compressing,
    /// Its compressed frame is kept (`<i>.zst`).
    Packed,
    /// It goes stored: compression does not pay for it, failed, or a
    /// stream reached it first this run.
    AsItIs,
}

/// How a stream sends one chunk.
#[derive(Debug, PartialEq)]
pub enum Part {
    /// Its compressed frame, this file.
    Packed(PathBuf),
    /// Stored, read from the blob's file at `offset`.
    AsItIs { offset: u64, len: u64 },
    /// A compressor is on it: ask again in a moment.
    Wait,
}

/// The chunks of one large blob, as this run's compressors and streams
/// share them.
pub struct Chunks {
    dir: PathBuf,
    src: PathBuf,
    size: u64,
    state: Mutex<Vec<State>>,
}

impl Chunks {
    /// The chunks of blob `d` (bytes in `src`, `size` of them), those
    /// compressed or judged not worth it by earlier runs as they left them.
    pub fn open(store: &Store, d: &Digest, src: &Path, size: u64) -> Chunks {
        let dir = store.dir().join("zstd").join(d.hex());
        let count = size.div_ceil(CHUNK) as usize;
        let state = (0..count)
            .map(|i| match () {
                _ if dir.join(format!("{i}.zst")).is_file() => State::Packed,
                _ if dir.join(format!("{i}.raw")).is_file() => State::AsItIs,
                _ => State::Pending,
            })
            .collect();
        Chunks { dir, src: src.to_path_buf(), size, state: Mutex::new(state) }
    }

    pub fn count(&self) -> usize {
        self.lock().len()
    }

    /// The blob's file.
    pub fn src(&self) -> &Path {
        &self.src
    }

    /// The blob's size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Whether every chunk goes compressed (none stored, none pending).
    pub fn all_packed(&self) -> bool {
        self.lock().iter().all(|s| *s == State::Packed)
    }

    /// How a stream sends chunk `i` now, having waited `waited` for it: a
    /// chunk no compressor has started is taken to go stored (for every
    /// stream of this run); one being compressed is waited for up to
    /// [`PATIENCE`], then sent stored by this stream (its compressor goes
    /// on, for the streams after it and later runs: compressors run at the
    /// lowest priority, and a stream must not wait on one the CPUs starve).
    pub fn part(&self, i: usize, waited: Duration) -> Part {
        let mut state = self.lock();
        let offset = i as u64 * CHUNK;
        let stored = Part::AsItIs { offset, len: CHUNK.min(self.size - offset) };
        match state[i] {
            State::Packed => Part::Packed(self.packed_path(i)),
            State::Compressing if waited < PATIENCE => Part::Wait,
            State::Compressing => stored,
            State::Pending | State::AsItIs => {
                state[i] = State::AsItIs;
                stored
            }
        }
    }

    /// How chunk `i` goes if that is decided already (compressed and kept,
    /// or stored), without deciding it: a stream sends the settled chunks
    /// after the one it is at in the same piece.
    pub fn settled(&self, i: usize) -> Option<Part> {
        let offset = i as u64 * CHUNK;
        match self.lock().get(i)? {
            State::Packed => Some(Part::Packed(self.packed_path(i))),
            State::AsItIs => Some(Part::AsItIs { offset, len: CHUNK.min(self.size - offset) }),
            State::Pending | State::Compressing => None,
        }
    }

    /// The first chunk no compressor or stream has taken, now taken by the
    /// caller, who must [`Chunks::compress`] it.
    pub fn claim(&self) -> Option<usize> {
        let mut state = self.lock();
        let i = state.iter().position(|s| *s == State::Pending)?;
        state[i] = State::Compressing;
        Some(i)
    }

    /// Compress chunk `i` (claimed), keeping its frame if that pays; any
    /// failure leaves it to go stored. Blocks: call it off the async
    /// workers.
    pub fn compress(&self, i: usize) {
        let outcome = self.compress_chunk(i).unwrap_or(State::AsItIs);
        self.lock()[i] = outcome;
    }

    /// Chunk `i`'s compression, if it did not finish (the task running it
    /// ended early): it goes stored.
    pub fn abandon(&self, i: usize) {
        let mut state = self.lock();
        if state[i] == State::Compressing {
            state[i] = State::AsItIs;
        }
    }

    /// Drop the compressed chunks (a node refused a stream with them): they
    /// go stored for the rest of this run, and the next run that needs them
    /// makes them again.
    pub fn forget(&self) {
        let mut state = self.lock();
        let _ = fs::remove_dir_all(&self.dir);
        for s in state.iter_mut().filter(|s| **s == State::Packed) {
            *s = State::AsItIs;
        }
    }

    fn compress_chunk(&self, i: usize) -> Result<State> {
        fs::create_dir_all(&self.dir).map_err(|e| err("cannot create", &self.dir, e))?;
        let tmp = self.dir.join(format!(".tmp-{}-{:?}", std::process::id(), std::thread::current().id()));
        let offset = i as u64 * CHUNK;
        let (original, compressed) =
            compress(&self.src, offset, CHUNK.min(self.size - offset), &tmp).inspect_err(|_| {
                let _ = fs::remove_file(&tmp);
            })?;
        if compressed * 10 > original * 9 {
            let _ = fs::remove_file(&tmp);
            let raw = self.dir.join(format!("{i}.raw"));
            fs::write(&raw, b"").map_err(|e| err("cannot write", &raw, e))?;
            return Ok(State::AsItIs);
        }
        let packed = self.packed_path(i);
        fs::rename(&tmp, &packed).map_err(|e| err("cannot rename into", &packed, e))?;
        Ok(State::Packed)
    }

    fn packed_path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("{i}.zst"))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<State>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Compress `len` bytes of `src` from `offset` into `dest` (synced: a file
/// that outlives a crash is whole); the sizes before and after.
fn compress(src: &Path, offset: u64, len: u64, dest: &Path) -> Result<(u64, u64)> {
    let mut input = fs::File::open(src).map_err(|e| err("cannot read", src, e))?;
    input.seek(SeekFrom::Start(offset)).map_err(|e| err("cannot read", src, e))?;
    let out = fs::File::create(dest).map_err(|e| err("cannot create", dest, e))?;
    let mut enc = zstd::Encoder::new(out, LEVEL).map_err(|e| err("cannot compress into", dest, e))?;
    // a 1 MiB window: a compressor's memory is mostly its window, and
    // binaries lose well under 1% of the saving against level 3's 2 MiB
    enc.window_log(WINDOW_LOG).map_err(|e| err("cannot compress into", dest, e))?;
    let copied =
        std::io::copy(&mut BufReader::new(input.take(len)), &mut enc).map_err(|e| err("cannot compress", src, e))?;
    if copied != len {
        let e = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the file is shorter than the blob");
        return Err(err("cannot compress", src, e));
    }
    let mut out = enc.finish().map_err(|e| err("cannot compress into", dest, e))?;
    out.flush().and_then(|_| out.sync_all()).map_err(|e| err("cannot write", dest, e))?;
    let compressed = out.metadata().map_err(|e| err("cannot read", dest, e))?.len();
    Ok((len, compressed))
}

/// Remove the compressed chunks of blobs not in `keep`, and the whole-blob
/// files of earlier versions (part of [`Store::gc`]).
pub(super) fn gc(store: &Store, keep: &std::collections::BTreeSet<Digest>, dry_run: bool) -> Result<()> {
    let dir = store.dir().join("zstd");
    let entries = match fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(err("cannot list", &dir, e)),
    };
    for e in entries.flatten() {
        let path = e.path();
        let kept = Digest::parse(&e.file_name().to_string_lossy()).is_some_and(|d| keep.contains(&d));
        if kept || dry_run || e.file_name().to_string_lossy().starts_with(".tmp-") {
            continue;
        }
        let removed = match path.is_dir() {
            true => fs::remove_dir_all(&path),
            false => fs::remove_file(&path),
        };
        removed.map_err(|x| err("cannot remove", &path, x))?;
    }
    Ok(())
}

fn err(what: &'static str, path: &Path, e: std::io::Error) -> Error {
    Error::Io { what, path: path.to_path_buf(), reason: e.to_string() }
}

/// zstd's largest block (RFC 8878, Block_Maximum_Size).
const BLOCK: u64 = 128 << 10;

/// A zstd frame holding `len` bytes as they are (raw blocks, RFC 8878
/// 3.1.1): what a chunk sent uncompressed is wrapped in, so that one
/// `zstd -d` on the node reads stored and compressed chunks alike. Costs
/// 3 bytes per 128 KiB and no CPU.
pub struct StoredFrame<R> {
    bytes: R,
    /// Bytes of the chunk not yet handed out.
    left: u64,
    /// Of the current block.
    block_left: u64,
    head: Vec<u8>,
    head_at: usize,
}

impl<R: Read> StoredFrame<R> {
    /// The frame of the next `len` bytes of `bytes` (at least one).
    pub fn new(bytes: R, len: u64) -> StoredFrame<R> {
        // magic, then a header with no content size, no checksum, no
        // dictionary, and a 128 KiB window (the largest block's size)
        let head = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3];
        StoredFrame { bytes, left: len, block_left: 0, head, head_at: 0 }
    }

    /// The frame's size for `len` bytes.
    pub fn len_for(len: u64) -> u64 {
        6 + 3 * len.div_ceil(BLOCK).max(1) + len
    }
}

impl<R: Read> Read for StoredFrame<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.head_at < self.head.len() {
                let n = (self.head.len() - self.head_at).min(buf.len());
                buf[..n].copy_from_slice(&self.head[self.head_at..self.head_at + n]);
                self.head_at += n;
                return Ok(n);
            }
            if self.block_left > 0 {
                let want = self.block_left.min(buf.len() as u64) as usize;
                let n = self.bytes.read(&mut buf[..want])?;
                if n == 0 {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the file is shorter than the blob",
                    ));
                }
                self.block_left -= n as u64;
                self.left -= n as u64;
                return Ok(n);
            }
            if self.left == 0 {
                return Ok(0);
            }
            // a raw block's header: last-block bit, type 0, size << 3
            let size = self.left.min(BLOCK);
            let word = (size << 3) as u32 | u32::from(size == self.left);
            self.head = word.to_le_bytes()[..3].to_vec();
            self.head_at = 0;
            self.block_left = size;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(len: usize) -> Vec<u8> {
        "kubelet kubeadm etcd containerd\n".repeat(len / 32 + 1).into_bytes()[..len].to_vec()
    }

    #[test]
    fn a_stored_frame_is_what_zstd_decodes_to_the_bytes() {
        for len in [1, 5, BLOCK as usize - 1, BLOCK as usize, BLOCK as usize + 1, 3 * BLOCK as usize + 17] {
            let bytes = text(len);
            let mut frame = Vec::new();
            StoredFrame::new(&bytes[..], len as u64).read_to_end(&mut frame).unwrap();
            assert_eq!(frame.len() as u64, StoredFrame::<&[u8]>::len_for(len as u64), "{len}");
            assert_eq!(zstd::decode_all(&frame[..]).unwrap(), bytes, "{len}");
        }
        let short = StoredFrame::new(&b"ab"[..], 3).read_to_end(&mut Vec::new()).unwrap_err();
        assert_eq!(short.kind(), std::io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn chunks_packed_and_stored_decode_as_one_run_of_frames() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("store"));
        let bytes = text(2 * CHUNK as usize + 1000);
        let d = store.put(&bytes).unwrap();
        let chunks = Chunks::open(&store, &d, &store.blob_path(&d), bytes.len() as u64);
        assert_eq!(chunks.count(), 3);
        // a compressor takes the first, a stream reaches the second first
        assert_eq!(chunks.claim(), Some(0));
        assert_eq!(chunks.part(0, Duration::ZERO), Part::Wait);
        assert_eq!(chunks.part(0, PATIENCE), Part::AsItIs { offset: 0, len: CHUNK }, "waited long enough");
        assert_eq!(chunks.part(1, Duration::ZERO), Part::AsItIs { offset: CHUNK, len: CHUNK });
        assert_eq!(chunks.claim(), Some(2), "a chunk a stream sent stored is not compressed this run");
        chunks.compress(0);
        chunks.compress(2);
        let mut run = Vec::new();
        for i in 0..3 {
            match chunks.part(i, Duration::ZERO) {
                Part::Packed(p) => run.extend(fs::read(p).unwrap()),
                Part::AsItIs { offset, len } => {
                    let mut f = fs::File::open(store.blob_path(&d)).unwrap();
                    f.seek(SeekFrom::Start(offset)).unwrap();
                    StoredFrame::new(f, len).read_to_end(&mut run).unwrap();
                }
                Part::Wait => panic!("nothing is being compressed"),
            }
        }
        // the second stored (a little over its bytes), the others compressed
        assert!(run.len() as u64 > CHUNK && (run.len() as u64) < CHUNK + CHUNK / 10, "{}", run.len());
        assert_eq!(zstd::decode_all(&run[..]).unwrap(), bytes);
        assert!(!chunks.all_packed());
        // kept for the next run, which compresses what this one sent stored
        let next = Chunks::open(&store, &d, &store.blob_path(&d), bytes.len() as u64);
        assert_eq!(next.claim(), Some(1));
        assert_eq!(next.claim(), None);
        next.compress(1);
        assert!(next.all_packed());
    }

    #[test]
    fn what_does_not_compress_is_remembered_and_gc_drops_the_gone() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("store"));
        let mut noise = vec![0u8; 1 << 20];
        blake3::Hasher::new().finalize_xof().fill(&mut noise);
        let n = store.put(&noise).unwrap();
        let chunks = Chunks::open(&store, &n, &store.blob_path(&n), noise.len() as u64);
        assert_eq!(chunks.claim(), Some(0));
        chunks.compress(0);
        assert_eq!(chunks.part(0, Duration::ZERO), Part::AsItIs { offset: 0, len: 1 << 20 });
        let again = Chunks::open(&store, &n, &store.blob_path(&n), noise.len() as u64);
        assert_eq!(again.claim(), None, "remembered as not worth compressing");

        let t = text(1 << 20);
        let d = store.put(&t).unwrap();
        let chunks = Chunks::open(&store, &d, &store.blob_path(&d), t.len() as u64);
        assert_eq!(chunks.claim(), Some(0));
        chunks.compress(0);
        assert!(chunks.all_packed());
        gc(&store, &[n].into_iter().collect(), false).unwrap();
        assert!(!dir.path().join("store/zstd").join(d.hex()).exists());
        assert!(dir.path().join("store/zstd").join(n.hex()).join("0.raw").exists());
    }
}
