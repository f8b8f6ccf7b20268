//! The byte stream the node program's `put` reads: every blob a node lacks,
//! one after another, each a header line `BLAKE3 SHA256 SIZE ENCODING` and
//! then its body: SIZE bytes of its own (`raw`), or, for a large blob
//! (`frames`), its chunks as zstd frames, each after a line with its
//! length, and a line `0` after the last. A sha256 not yet worked out when
//! the stream reaches its blob is `-` in the header and follows the body
//! on a line of its own (the stream waits for it there): the deployer
//! hashes a binary while its bytes go, not before the first byte of the
//! stream. Small blobs that follow one another go together as a `pack`: a
//! header `pack COUNT SIZE tar`, a tar archive of SIZE bytes whose members
//! are named by their blake3, then a line `BLAKE3 SHA256` for each member
//! (a sha256 not yet worked out waits there): the node unpacks them with
//! one process, not one each (a process is ~5 ms on a busy node, most of
//! the time of a stream of small files). One command carries them all: a
//! round trip and a shell per blob would cost more than the bytes of most
//! blobs. Files are opened one at a time, as the stream reaches them, and
//! read in the upload's chunks. A chunk a compressor is working on waits
//! (the stream says `WouldBlock`, and is read again a moment later); one
//! no compressor has started goes stored (`store/compressed.rs`).

use std::fs::File;
use std::io::{Cursor, ErrorKind, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use super::protocol::request::is_sha256;
use crate::store::compressed::{Chunks, Part, StoredFrame};
use crate::store::Digest;

/// One blob for `put`: its names and where its bytes are.
pub struct PutBlob<'a> {
    pub hash: Digest,
    pub sha256: Sha256<'a>,
    pub body: Body<'a>,
}

/// A blob's sha256, as `put` sends it.
#[derive(Clone, Copy)]
pub enum Sha256<'a> {
    /// Known before the stream starts: in the blob's header.
    Known(&'a str),
    /// Being worked out while the stream goes: after the blob's body, once
    /// `ready` gives it (`None`: not yet, the stream waits; an error ends
    /// the stream).
    Later(&'a Ready<'a>),
}

/// A sha256 being worked out: `None` until it is there.
pub type Ready<'a> = dyn Fn() -> Option<Result<String, String>> + Sync + 'a;

/// Where a blob's bytes come from, and how they travel.
pub enum Body<'a> {
    Bytes(&'a [u8]),
    File(&'a Path),
    /// A large file as zstd frames, chunk by chunk (the node decompresses,
    /// then checks the sha256 of the result).
    Chunked(&'a Chunks),
}

impl PutBlob<'_> {
    /// How many bytes its body is, before compression (0 for a file that
    /// cannot be read: the stream will say why).
    pub fn body_len(&self) -> u64 {
        match &self.body {
            Body::Bytes(b) => b.len() as u64,
            Body::File(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
            Body::Chunked(c) => c.size(),
        }
    }

    /// The header and the body, ready to read.
    fn open(&self) -> std::io::Result<Piece<'_>> {
        let (body, len, encoding): (Piece<'_>, u64, &str) = match &self.body {
            Body::Bytes(b) => (Box::new(*b), b.len() as u64, "raw"),
            Body::File(p) => {
                let (f, len) = whole_file(p)?;
                (f, len, "raw")
            }
            Body::Chunked(c) => (Box::new(frames(c)), c.size(), "frames"),
        };
        let (shown, after): (&str, Piece<'_>) = match self.sha256 {
            Sha256::Known(s) => (s, Box::new(std::io::empty())),
            Sha256::Later(ready) => ("-", Box::new(Trailer { prefix: String::new(), ready, line: None })),
        };
        let header = format!("{} {shown} {len} {encoding}\n", self.hash.hex());
        Ok(Box::new(Cursor::new(header).chain(body).chain(after)))
    }
}

/// A line that names a sha256 once it is worked out (`WouldBlock` until
/// then), after `prefix`: the line after a body (no prefix), or a pack
/// member's (its blake3 and a space).
struct Trailer<'a> {
    prefix: String,
    ready: &'a Ready<'a>,
    line: Option<Cursor<String>>,
}

impl Read for Trailer<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.line.is_none() {
            let sha = match (self.ready)() {
                None => return Err(ErrorKind::WouldBlock.into()),
                Some(r) => r.map_err(std::io::Error::other)?,
            };
            if !is_sha256(&sha) {
                return Err(std::io::Error::other(format!("bad sha256 {sha:?}")));
            }
            self.line = Some(Cursor::new(format!("{}{sha}\n", self.prefix)));
        }
        self.line.as_mut().map_or(Ok(0), |l| l.read(buf))
    }
}

/// Blobs under this many bytes go in a pack when more than one follow one
/// another (the node checks blobs of this size and more on their own, as
/// they arrive: `EARLY_CHECK_FROM` in the node program).
pub const PACK_BELOW: u64 = 1 << 20;
/// At most this many bytes of blobs, and this many blobs, in one pack:
/// the deployer holds a pack in memory while it goes.
const PACK_BYTES: u64 = 16 << 20;
const PACK_BLOBS: usize = 256;

/// Whether `b` may go in a pack: small, and its bytes read as they are.
fn packable(b: &PutBlob<'_>) -> bool {
    !matches!(b.body, Body::Chunked(_)) && b.body_len() < PACK_BELOW
}

/// The blobs in the stream's pieces: runs of small ones as packs (a run
/// of one goes on its own), the rest one by one, in the order given.
fn groups<'b, 'a>(blobs: &'b [PutBlob<'a>]) -> Vec<&'b [PutBlob<'a>]> {
    let mut out: Vec<&[PutBlob<'a>]> = Vec::new();
    let mut start = 0;
    let mut bytes = 0;
    for (i, b) in blobs.iter().enumerate() {
        let run = i - start;
        let joins =
            run > 0 && packable(b) && packable(&blobs[start]) && run < PACK_BLOBS && bytes + b.body_len() <= PACK_BYTES;
        if !joins {
            if i > start {
                out.push(&blobs[start..i]);
            }
            start = i;
            bytes = 0;
        }
        bytes += b.body_len();
    }
    if start < blobs.len() {
        out.push(&blobs[start..]);
    }
    out
}

/// A pack's header, its tar archive (members named by their blake3,
/// read-only, owned by root, in the order given) and its members' lines.
fn open_pack<'a>(members: &'a [PutBlob<'a>]) -> std::io::Result<Piece<'a>> {
    let mut tar = tar::Builder::new(Vec::new());
    let mut lines: Vec<Piece<'a>> = Vec::new();
    for m in members {
        let bytes: std::borrow::Cow<'_, [u8]> = match &m.body {
            Body::Bytes(b) => (*b).into(),
            Body::File(p) => std::fs::read(p).map_err(|e| named(p, e))?.into(),
            Body::Chunked(_) => return Err(std::io::Error::other(format!("{}: a chunked blob in a pack", m.hash))),
        };
        let mut h = tar::Header::new_ustar();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_size(bytes.len() as u64);
        h.set_mode(0o444);
        h.set_mtime(0);
        tar.append_data(&mut h, m.hash.hex(), &bytes[..])?;
        let prefix = format!("{} ", m.hash.hex());
        lines.push(match m.sha256 {
            Sha256::Known(s) => Box::new(Cursor::new(format!("{prefix}{s}\n"))),
            Sha256::Later(ready) => Box::new(Trailer { prefix, ready, line: None }),
        });
    }
    let archive = tar.into_inner()?;
    let header = format!("pack {} {} tar\n", members.len(), archive.len());
    let mut lines = lines.into_iter();
    let after = Sequence { current: None, next: Box::new(move || Ok(lines.next())) };
    Ok(Box::new(Cursor::new(header).chain(Cursor::new(archive)).chain(after)))
}

/// A part of a stream, ready to read.
type Piece<'a> = Box<dyn Read + Send + 'a>;

/// Pieces read one after another, each opened when the one before is
/// done; `next` says `None` at the end (and may say `WouldBlock`: it is
/// asked again at the next read).
struct Sequence<'a> {
    current: Option<Piece<'a>>,
    next: Box<dyn FnMut() -> std::io::Result<Option<Piece<'a>>> + Send + 'a>,
}

impl Read for Sequence<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if let Some(r) = &mut self.current {
                let n = r.read(buf)?;
                if n > 0 {
                    return Ok(n);
                }
                self.current = None;
            }
            match (self.next)()? {
                Some(r) => self.current = Some(r),
                None => return Ok(0),
            }
        }
    }
}

/// A [`Body::Chunked`] blob's body: pieces of frames, each after its
/// length's line, then `0`. A piece is the chunk the stream is at (waited
/// for while a compressor is on it) and the settled chunks after it: the
/// node reads a piece with one process, and zstd decodes frames one after
/// another, so a blob whose chunks are all compressed already (every run
/// after the first) goes as one piece, not one per chunk.
fn frames(chunks: &Chunks) -> Sequence<'_> {
    let mut i = 0;
    // since when this stream waits for chunk i's compressor
    let mut waiting: Option<Instant> = None;
    let next = move || {
        match i {
            _ if i > chunks.count() => return Ok(None),
            _ if i == chunks.count() => {
                i += 1;
                return Ok(Some(Box::new(Cursor::new(b"0\n")) as Piece<'_>));
            }
            _ => {}
        }
        let first = match chunks.part(i, waiting.map_or(Duration::ZERO, |t| t.elapsed())) {
            Part::Wait => {
                waiting.get_or_insert_with(Instant::now);
                return Err(ErrorKind::WouldBlock.into());
            }
            part => part,
        };
        let (mut piece, mut len) = frame(chunks, first)?;
        let start = i;
        i += 1;
        waiting = None;
        while i - start < PIECE_CHUNKS {
            let Some(part) = chunks.settled(i) else { break };
            let (more, n) = frame(chunks, part)?;
            piece = Box::new(piece.chain(more));
            len += n;
            i += 1;
        }
        Ok(Some(Box::new(Cursor::new(format!("{len}\n")).chain(piece)) as Piece<'_>))
    };
    Sequence { current: None, next: Box::new(next) }
}

/// At most this many chunks (128 MiB) in a piece: each holds a file open
/// until the piece is read, so a blob of many GB keeps a bounded number.
const PIECE_CHUNKS: usize = 16;

/// One chunk's frame, ready to read, and its length.
fn frame(chunks: &Chunks, part: Part) -> std::io::Result<(Piece<'static>, u64)> {
    match part {
        Part::Packed(p) => whole_file(&p),
        Part::AsItIs { offset, len } => {
            let src = chunks.src();
            let mut f = File::open(src).map_err(|e| named(src, e))?;
            f.seek(SeekFrom::Start(offset)).map_err(|e| named(src, e))?;
            Ok((Box::new(StoredFrame::new(f, len)), StoredFrame::<File>::len_for(len)))
        }
        Part::Wait => Err(std::io::Error::other("a chunk being compressed in a piece")),
    }
}

/// The file at `p`, exactly the bytes it has now (even if it grows
/// meanwhile), and how many.
fn whole_file(p: &Path) -> std::io::Result<(Piece<'static>, u64)> {
    let f = File::open(p).map_err(|e| named(p, e))?;
    let len = f.metadata().map_err(|e| named(p, e))?.len();
    Ok((Box::new(f.take(len)), len))
}

fn named(p: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: {e}", p.display()))
}

/// The blobs as one stream, in the order given; counts the bytes it has
/// handed out (what crosses the wire).
pub struct PutStream<'a> {
    blobs: Sequence<'a>,
    pub sent: u64,
}

impl<'a> PutStream<'a> {
    pub fn new(blobs: &'a [PutBlob<'a>]) -> PutStream<'a> {
        let mut left = groups(blobs).into_iter();
        let next = move || {
            left.next()
                .map(|g| match g {
                    [one] => one.open(),
                    pack => open_pack(pack),
                })
                .transpose()
        };
        PutStream { blobs: Sequence { current: None, next: Box::new(next) }, sent: 0 }
    }
}

impl Read for PutStream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.blobs.read(buf)?;
        self.sent += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::compressed::CHUNK;
    use crate::store::Store;

    #[test]
    fn a_blob_on_its_own_follows_its_header() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"file bytes").unwrap();
        let b = Digest::of(b"file bytes");
        let sha = "0".repeat(64);
        let blobs = [PutBlob { hash: b, sha256: Sha256::Known(&sha), body: Body::File(&f) }];
        let mut s = PutStream::new(&blobs);
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert_eq!(out, format!("{} {sha} 10 raw\nfile bytes", b.hex()));
        assert_eq!(s.sent, out.len() as u64);
    }

    /// The members of a pack's archive: (name, mode, bytes).
    fn members(archive: &[u8]) -> Vec<(String, u32, Vec<u8>)> {
        let mut a = tar::Archive::new(archive);
        let entries = a.entries().unwrap().map(|e| {
            let mut e = e.unwrap();
            assert_eq!(e.header().entry_type(), tar::EntryType::Regular);
            let name = e.path().unwrap().to_str().unwrap().to_string();
            let mode = e.header().mode().unwrap();
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).unwrap();
            (name, mode, bytes)
        });
        entries.collect()
    }

    #[test]
    fn small_blobs_in_a_row_go_as_one_pack_with_their_sha256_lines_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"file bytes").unwrap();
        let large = vec![7u8; PACK_BELOW as usize];
        let (a, b, c, l) =
            (Digest::of(b"in memory"), Digest::of(b"file bytes"), Digest::of(b"last"), Digest::of(&large));
        let sha = "0".repeat(64);
        let later = std::sync::Mutex::new(None);
        let ready = || later.lock().unwrap().clone();
        let blobs = [
            PutBlob { hash: a, sha256: Sha256::Known(&sha), body: Body::Bytes(b"in memory") },
            PutBlob { hash: b, sha256: Sha256::Later(&ready), body: Body::File(&f) },
            PutBlob { hash: l, sha256: Sha256::Known(&sha), body: Body::Bytes(&large) },
            PutBlob { hash: c, sha256: Sha256::Known(&sha), body: Body::Bytes(b"last") },
        ];
        let mut s = PutStream::new(&blobs);
        let mut out = Vec::new();
        // the archive goes, then the stream waits for the second member's sha256
        assert_eq!(s.read_to_end(&mut out).unwrap_err().kind(), ErrorKind::WouldBlock);
        *later.lock().unwrap() = Some(Ok("b".repeat(64)));
        s.read_to_end(&mut out).unwrap();
        assert_eq!(s.sent, out.len() as u64);
        let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
        let nl = out.iter().position(|b| *b == b'\n').unwrap();
        let header = text(&out[..nl]);
        let fields: Vec<&str> = header.split(' ').collect();
        assert_eq!((fields[0], fields[1], fields[3]), ("pack", "2", "tar"), "{header}");
        let size: usize = fields[2].parse().unwrap();
        let archive = &out[nl + 1..nl + 1 + size];
        assert_eq!(
            members(archive),
            [(a.hex(), 0o444, b"in memory".to_vec()), (b.hex(), 0o444, b"file bytes".to_vec())]
        );
        let rest = &out[nl + 1 + size..];
        let lines = format!("{} {sha}\n{} {}\n", a.hex(), b.hex(), "b".repeat(64));
        assert_eq!(text(&rest[..lines.len()]), lines);
        // a large blob, and a small one alone, go on their own
        let rest = &rest[lines.len()..];
        let large_header = format!("{} {sha} {} raw\n", l.hex(), large.len());
        assert_eq!(text(&rest[..large_header.len()]), large_header);
        let rest = &rest[large_header.len() + large.len()..];
        assert_eq!(text(rest), format!("{} {sha} 4 raw\nlast", c.hex()));
    }

    #[test]
    fn packs_are_bounded_in_blobs_and_bytes() {
        let sha = "0".repeat(64);
        let small: Vec<Vec<u8>> = (0..PACK_BLOBS + 5).map(|i| i.to_string().into_bytes()).collect();
        let blobs: Vec<PutBlob<'_>> = small
            .iter()
            .map(|b| PutBlob { hash: Digest::of(b), sha256: Sha256::Known(&sha), body: Body::Bytes(b) })
            .collect();
        let sizes: Vec<usize> = groups(&blobs).iter().map(|g| g.len()).collect();
        assert_eq!(sizes, [PACK_BLOBS, 5]);
        let big = vec![1u8; PACK_BELOW as usize - 1];
        let n = (PACK_BYTES / (PACK_BELOW - 1)) as usize + 2;
        let blobs: Vec<PutBlob<'_>> = (0..n)
            .map(|_| PutBlob { hash: Digest::of(&big), sha256: Sha256::Known(&sha), body: Body::Bytes(&big) })
            .collect();
        let sizes: Vec<usize> = groups(&blobs).iter().map(|g| g.len()).collect();
        assert_eq!(sizes, [n - 2, 2], "at most {PACK_BYTES} bytes a pack");
    }

    /// The frames of a `frames` body, as the node reads them: each after
    /// its length's line, until `0`.
    fn frames(mut body: &[u8]) -> Vec<u8> {
        let mut run = Vec::new();
        loop {
            let nl = body.iter().position(|b| *b == b'\n').expect("a length line");
            let len: usize = std::str::from_utf8(&body[..nl]).unwrap().parse().unwrap();
            body = &body[nl + 1..];
            if len == 0 {
                assert!(body.is_empty());
                return run;
            }
            run.extend_from_slice(&body[..len]);
            body = &body[len..];
        }
    }

    #[test]
    fn a_chunk_being_compressed_waits_and_one_not_started_goes_stored() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("store"));
        let bytes = "containerd etcd\n".repeat(2 * CHUNK as usize / 16 + 100).into_bytes();
        let d = store.put(&bytes).unwrap();
        let chunks = Chunks::open(&store, &d, &store.blob_path(&d), bytes.len() as u64);
        let sha = "0".repeat(64);
        let blobs = [PutBlob { hash: d, sha256: Sha256::Known(&sha), body: Body::Chunked(&chunks) }];
        assert_eq!(blobs[0].body_len(), bytes.len() as u64);
        assert_eq!(chunks.claim(), Some(0));
        let mut s = PutStream::new(&blobs);
        let mut out = Vec::new();
        let e = s.read_to_end(&mut out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::WouldBlock);
        assert_eq!(String::from_utf8_lossy(&out), format!("{} {sha} {} frames\n", d.hex(), bytes.len()));
        chunks.compress(0);
        s.read_to_end(&mut out).unwrap();
        assert_eq!(s.sent, out.len() as u64);
        let header = out.iter().position(|b| *b == b'\n').unwrap();
        let run = frames(&out[header + 1..]);
        assert_eq!(zstd::decode_all(&run[..]).unwrap(), bytes);
        // the first chunk compressed, the other two stored
        assert!(run.len() < bytes.len() - CHUNK as usize + CHUNK as usize / 2, "{}", run.len());
        assert!(run.len() > bytes.len() - CHUNK as usize, "{}", run.len());
    }

    /// The lengths of a `frames` body's pieces, as the node reads them.
    fn piece_lengths(mut body: &[u8]) -> Vec<usize> {
        let mut lengths = Vec::new();
        loop {
            let nl = body.iter().position(|b| *b == b'\n').expect("a length line");
            let len: usize = std::str::from_utf8(&body[..nl]).unwrap().parse().unwrap();
            body = &body[nl + 1 + len..];
            if len == 0 {
                return lengths;
            }
            lengths.push(len);
        }
    }

    #[test]
    fn chunks_compressed_already_go_as_one_piece() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("store"));
        let bytes = "kubelet kubeadm\n".repeat(3 * CHUNK as usize / 16 - 7).into_bytes();
        let d = store.put(&bytes).unwrap();
        let chunks = Chunks::open(&store, &d, &store.blob_path(&d), bytes.len() as u64);
        while let Some(i) = chunks.claim() {
            chunks.compress(i);
        }
        let sha = "0".repeat(64);
        let blobs = [PutBlob { hash: d, sha256: Sha256::Known(&sha), body: Body::Chunked(&chunks) }];
        let mut out = Vec::new();
        PutStream::new(&blobs).read_to_end(&mut out).unwrap();
        let header = out.iter().position(|b| *b == b'\n').unwrap();
        assert_eq!(piece_lengths(&out[header + 1..]).len(), 1, "three compressed chunks, one piece");
        assert_eq!(zstd::decode_all(&frames(&out[header + 1..])[..]).unwrap(), bytes);
    }

    #[test]
    fn a_sha256_worked_out_meanwhile_follows_the_body_once_it_is_there() {
        let d = Digest::of(b"kubelet");
        let sha = std::sync::Mutex::new(None);
        let ready = || sha.lock().unwrap().clone();
        let blobs = [PutBlob { hash: d, sha256: Sha256::Later(&ready), body: Body::Bytes(b"kubelet") }];
        let mut s = PutStream::new(&blobs);
        let mut out = Vec::new();
        assert_eq!(s.read_to_end(&mut out).unwrap_err().kind(), ErrorKind::WouldBlock);
        assert_eq!(String::from_utf8_lossy(&out), format!("{} - 7 raw\nkubelet", d.hex()));
        *sha.lock().unwrap() = Some(Ok("a".repeat(64)));
        s.read_to_end(&mut out).unwrap();
        assert_eq!(String::from_utf8_lossy(&out), format!("{} - 7 raw\nkubelet{}\n", d.hex(), "a".repeat(64)));
        assert_eq!(s.sent, out.len() as u64);
        // one that could not be worked out, or is not a sha256, ends the stream
        for (given, says) in [(Err("hashing kubelet: gone".to_string()), "gone"), (Ok("-\n".into()), "bad sha256")] {
            *sha.lock().unwrap() = Some(given);
            let e = PutStream::new(&blobs).read_to_end(&mut Vec::new()).unwrap_err();
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let sha = "0".repeat(64);
        let blobs = [PutBlob {
            hash: Digest::of(b""),
            sha256: Sha256::Known(&sha),
            body: Body::File(Path::new("/nonexistent/x")),
        }];
        let e = PutStream::new(&blobs).read_to_end(&mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/x"), "{e}");
    }
}
