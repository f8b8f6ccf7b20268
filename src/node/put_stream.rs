//! The byte stream the node program's `put` reads: every blob a node lacks,
//! one after another, each a header line `BLAKE3 SHA256 SIZE ENCODING` and
//! then SIZE bytes — its own, or zstd's compression of them. One command
//! carries them all: a round trip and a shell per blob would cost more
//! than the bytes of most blobs. Files are opened one at a time, as the
//! stream reaches them, and read in the upload's chunks. A blob whose zstd
//! form is still being made waits while the blobs ready behind it go first
//! (the order of blobs in a stream means nothing to the node): the stream
//! says `WouldBlock` only when every blob left is waiting.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Cursor, ErrorKind, Read};
use std::path::{Path, PathBuf};

use tokio::sync::OnceCell;

use crate::store::Digest;

/// One blob for `put`: its names and where its bytes are.
pub struct PutBlob<'a> {
    pub hash: Digest,
    pub sha256: &'a str,
    pub body: Body<'a>,
}

/// Where a blob's bytes come from, and how they travel.
pub enum Body<'a> {
    Bytes(&'a [u8]),
    File(&'a Path),
    /// The zstd compression of the blob (the node decompresses, then
    /// checks the sha256 of the result).
    Zstd(&'a Path),
    /// A file whose zstd form is being made beside the stream: sent once
    /// the compressor is done, compressed, or as it is where that did not
    /// pay (`None`).
    Compressing {
        file: &'a Path,
        zstd: &'a OnceCell<Option<PathBuf>>,
    },
}

impl PutBlob<'_> {
    /// How many bytes its body is (0 for a file that cannot be read: the
    /// stream will say why); a blob being compressed counts as its file.
    pub fn body_len(&self) -> u64 {
        match &self.body {
            Body::Bytes(b) => b.len() as u64,
            Body::File(p) | Body::Zstd(p) | Body::Compressing { file: p, .. } => {
                std::fs::metadata(p).map_or(0, |m| m.len())
            }
        }
    }

    /// Whether its body can be read now (its zstd form, if being made, is).
    fn ready(&self) -> bool {
        !matches!(self.body, Body::Compressing { zstd, .. } if zstd.get().is_none())
    }

    /// The header and the body, ready to read; how many body bytes.
    fn open(&self) -> std::io::Result<(Box<dyn Read + Send + '_>, u64)> {
        let (file, encoding) = match &self.body {
            Body::Bytes(b) => return Ok(self.with_header(Box::new(*b), b.len() as u64, "raw")),
            Body::File(p) => (*p, "raw"),
            Body::Zstd(p) => (*p, "zstd"),
            Body::Compressing { zstd, file } => match zstd.get() {
                Some(Some(z)) => (z.as_path(), "zstd"),
                Some(None) => (*file, "raw"),
                None => return Err(ErrorKind::WouldBlock.into()),
            },
        };
        let f = File::open(file).map_err(|e| named(file, e))?;
        let len = f.metadata().map_err(|e| named(file, e))?.len();
        // exactly the announced bytes, even if the file grew meanwhile
        Ok(self.with_header(Box::new(f.take(len)), len, encoding))
    }

    /// `body` after its header line.
    fn with_header<'b>(
        &self,
        body: Box<dyn Read + Send + 'b>,
        len: u64,
        encoding: &str,
    ) -> (Box<dyn Read + Send + 'b>, u64) {
        let header = format!("{} {} {len} {encoding}\n", self.hash.hex(), self.sha256);
        (Box::new(Cursor::new(header).chain(body)), len)
    }
}

fn named(p: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: {e}", p.display()))
}

/// The blobs as one stream; counts the body bytes it has handed out.
pub struct PutStream<'a> {
    /// The blobs not yet opened, in the order given.
    left: VecDeque<&'a PutBlob<'a>>,
    current: Option<Box<dyn Read + Send + 'a>>,
    /// Body bytes of the blobs opened so far (what crosses the wire,
    /// headers aside).
    pub sent: u64,
}

impl<'a> PutStream<'a> {
    pub fn new(blobs: &'a [PutBlob<'a>]) -> PutStream<'a> {
        PutStream { left: blobs.iter().collect(), current: None, sent: 0 }
    }

    /// The first blob left that is ready, taken out of those left.
    fn next_ready(&mut self) -> Option<&'a PutBlob<'a>> {
        let i = self.left.iter().position(|b| b.ready())?;
        self.left.remove(i)
    }
}

impl Read for PutStream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if let Some(r) = &mut self.current {
                let n = r.read(buf)?;
                if n > 0 {
                    return Ok(n);
                }
            }
            self.current = None;
            match self.next_ready() {
                Some(b) => {
                    let (r, len) = b.open()?;
                    self.sent += len;
                    self.current = Some(r);
                }
                None if self.left.is_empty() => return Ok(0),
                // (the upload waits a moment and reads again)
                None => return Err(ErrorKind::WouldBlock.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_follow_their_headers_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"file bytes").unwrap();
        let (a, b) = (Digest::of(b"in memory"), Digest::of(b"file bytes"));
        let sha = "0".repeat(64);
        let blobs = [
            PutBlob { hash: a, sha256: &sha, body: Body::Bytes(b"in memory") },
            PutBlob { hash: b, sha256: &sha, body: Body::Zstd(&f) },
        ];
        let mut s = PutStream::new(&blobs);
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert_eq!(out, format!("{} {sha} 9 raw\nin memory{} {sha} 10 zstd\nfile bytes", a.hex(), b.hex()));
        assert_eq!(s.sent, 19);
    }

    #[test]
    fn a_blob_being_compressed_waits_while_the_ready_ones_go() {
        let dir = tempfile::tempdir().unwrap();
        let (f, z) = (dir.path().join("f"), dir.path().join("f.zst"));
        std::fs::write(&f, b"file bytes").unwrap();
        std::fs::write(&z, b"squeezed").unwrap();
        let (a, b, c) = (Digest::of(b"1"), Digest::of(b"file bytes"), Digest::of(b"3"));
        let sha = "0".repeat(64);
        let (later, never) = (OnceCell::new(), OnceCell::new());
        let blobs = [
            PutBlob { hash: b, sha256: &sha, body: Body::Compressing { file: &f, zstd: &later } },
            PutBlob { hash: c, sha256: &sha, body: Body::Compressing { file: &f, zstd: &never } },
            PutBlob { hash: a, sha256: &sha, body: Body::Bytes(b"1") },
        ];
        let mut s = PutStream::new(&blobs);
        let mut out = Vec::new();
        let e = s.read_to_end(&mut out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::WouldBlock);
        assert_eq!(String::from_utf8_lossy(&out), format!("{} {sha} 1 raw\n1", a.hex()));
        // compression paid for one, did not for the other (sent as it is);
        // the two go in their given order
        never.set(None).unwrap();
        later.set(Some(z.clone())).unwrap();
        out.clear();
        s.read_to_end(&mut out).unwrap();
        let expected = format!("{} {sha} 8 zstd\nsqueezed{} {sha} 10 raw\nfile bytes", b.hex(), c.hex());
        assert_eq!(String::from_utf8_lossy(&out), expected);
        assert_eq!(s.sent, 19);
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let sha = "0".repeat(64);
        let blobs = [PutBlob { hash: Digest::of(b""), sha256: &sha, body: Body::File(Path::new("/nonexistent/x")) }];
        let e = PutStream::new(&blobs).read_to_end(&mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/x"), "{e}");
    }
}
