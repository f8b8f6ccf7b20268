//! The byte stream the node program's `put` reads: every blob a node lacks,
//! one after another, each a header line `BLAKE3 SHA256 SIZE ENCODING` and
//! then SIZE bytes — its own, or zstd's compression of them. One command
//! carries them all: a round trip and a shell per blob would cost more
//! than the bytes of most blobs. Files are opened one at a time, as the
//! stream reaches them, and read in the upload's chunks.

use std::fs::File;
use std::io::{Cursor, Read};
use std::path::Path;

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
}

impl PutBlob<'_> {
    /// How many bytes its body is (0 for a file that cannot be read: the
    /// stream will say why).
    pub fn body_len(&self) -> u64 {
        match &self.body {
            Body::Bytes(b) => b.len() as u64,
            Body::File(p) | Body::Zstd(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
        }
    }

    /// The header and the body, ready to read; how many body bytes.
    fn open(&self) -> std::io::Result<(Box<dyn Read + Send + '_>, u64)> {
        let (body, len, encoding): (Box<dyn Read + Send + '_>, u64, &str) = match &self.body {
            Body::Bytes(b) => (Box::new(*b), b.len() as u64, "raw"),
            Body::File(p) | Body::Zstd(p) => {
                let f = File::open(p).map_err(|e| named(p, e))?;
                let len = f.metadata().map_err(|e| named(p, e))?.len();
                // exactly the announced bytes, even if the file grew meanwhile
                let enc = if matches!(self.body, Body::Zstd(_)) { "zstd" } else { "raw" };
                (Box::new(f.take(len)), len, enc)
            }
        };
        let header = format!("{} {} {len} {encoding}\n", self.hash.hex(), self.sha256);
        Ok((Box::new(Cursor::new(header).chain(body)), len))
    }
}

fn named(p: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: {e}", p.display()))
}

/// The blobs as one stream; counts the body bytes it has handed out.
pub struct PutStream<'a> {
    blobs: std::slice::Iter<'a, PutBlob<'a>>,
    current: Option<Box<dyn Read + Send + 'a>>,
    /// Body bytes of the blobs opened so far (what crosses the wire,
    /// headers aside).
    pub sent: u64,
}

impl<'a> PutStream<'a> {
    pub fn new(blobs: &'a [PutBlob<'a>]) -> PutStream<'a> {
        PutStream { blobs: blobs.iter(), current: None, sent: 0 }
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
            match self.blobs.next() {
                None => return Ok(0),
                Some(b) => {
                    let (r, len) = b.open()?;
                    self.sent += len;
                    self.current = Some(r);
                }
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
    fn a_missing_file_is_an_error_naming_it() {
        let sha = "0".repeat(64);
        let blobs = [PutBlob { hash: Digest::of(b""), sha256: &sha, body: Body::File(Path::new("/nonexistent/x")) }];
        let e = PutStream::new(&blobs).read_to_end(&mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/x"), "{e}");
    }
}
