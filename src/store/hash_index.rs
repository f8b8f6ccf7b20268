//! The blake3 of the deployer's files a cluster names (`file` and `local`
//! sources: binaries of tens of MB), kept between runs as git's index keeps
//! its hashes: by the file's identity and times — device, inode, size,
//! modification and status-change time in nanoseconds. Writing a file
//! changes its status-change time, which no program can set back, so a
//! file whose stat is the recorded one has the recorded bytes; one written
//! in the last [`RACY`] (within the clock's granularity of the hashing) is
//! never recorded, and a file whose stat changed while it was hashed
//! neither. Kept in `<store>/hashes.json`, 0600; a missing or damaged one is
//! an empty index. Only files that hold no key material are recorded (one
//! that does is refused each time it is named).

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::blobs::Digest;
use super::content::ContentId;

/// A file changed this recently is hashed every time.
const RACY: Duration = Duration::from_secs(2);

/// At most this many files are remembered (a run keeps the ones it named).
const MAX_ENTRIES: usize = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Stat {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stat {
    fn of(m: &std::fs::Metadata) -> Stat {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Stat {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        }
    }

    /// Changed so recently that another write in the same clock tick
    /// would leave the same stat.
    fn racy(&self) -> bool {
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
        let racy = RACY.as_nanos() as i128;
        now - self.mtime_ns < racy || now - self.ctime_ns < racy
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Entry {
    stat: Stat,
    blake3: String,
}

#[derive(Default)]
struct State {
    entries: BTreeMap<PathBuf, Entry>,
    /// Named by this run (kept first when the index is full).
    used: std::collections::BTreeSet<PathBuf>,
    changed: bool,
}

pub struct HashIndex {
    path: PathBuf,
    state: Mutex<State>,
}

impl HashIndex {
    /// The index at `path` (empty if there is none, or it is damaged).
    pub fn load(path: PathBuf) -> HashIndex {
        let entries = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
        HashIndex { path, state: Mutex::new(State { entries, ..Default::default() }) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `real`'s content as recorded, if its stat is the recorded one.
    pub fn get(&self, real: &Path, meta: &std::fs::Metadata) -> Option<ContentId> {
        let mut state = self.state();
        let e = state.entries.get(real)?;
        let stat = Stat::of(meta);
        if e.stat != stat || stat.racy() {
            return None;
        }
        let digest = Digest::parse(&e.blake3)?;
        state.used.insert(real.to_path_buf());
        Some(ContentId::Blob { digest, size: stat.size })
    }

    /// Records `id` as `real`'s content, if the file's stat was `before`
    /// when it was opened and still is (not written meanwhile), and not
    /// racily recent.
    pub fn put(&self, real: &Path, before: &std::fs::Metadata, id: &ContentId) {
        let ContentId::Blob { digest, .. } = id else { return };
        let Ok(after) = std::fs::metadata(real) else { return };
        let stat = Stat::of(before);
        if Stat::of(&after) != stat || stat.racy() {
            return;
        }
        let mut state = self.state();
        state.entries.insert(real.to_path_buf(), Entry { stat, blake3: digest.hex() });
        state.used.insert(real.to_path_buf());
        state.changed = true;
    }

    /// Writes the index if this run recorded anything (best effort: an
    /// index that cannot be written costs the next run a hash).
    pub fn save(&self) {
        let mut state = self.state();
        if !state.changed {
            return;
        }
        if state.entries.len() > MAX_ENTRIES {
            let used = std::mem::take(&mut state.used);
            state.entries.retain(|p, _| used.contains(p));
            state.used = used;
        }
        let Ok(bytes) = serde_json::to_vec(&state.entries) else { return };
        let Some(dir) = self.path.parent() else { return };
        if std::fs::create_dir_all(dir).and_then(|()| super::write_private(&self.path, &bytes)).is_ok() {
            state.changed = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_with(dir: &Path, file: &Path, id: &ContentId) -> HashIndex {
        let index = HashIndex::load(dir.join("hashes.json"));
        index.put(file, &std::fs::metadata(file).unwrap(), id);
        index.save();
        HashIndex::load(dir.join("hashes.json"))
    }

    /// A file last written long enough ago not to be racy.
    fn old_file(dir: &Path, text: &str) -> PathBuf {
        let p = dir.join("bin");
        std::fs::write(&p, text).unwrap();
        let past = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options().write(true).open(&p).unwrap().set_modified(past).unwrap();
        p
    }

    fn id(text: &str) -> ContentId {
        ContentId::of_bytes(text.as_bytes())
    }

    #[test]
    fn a_recorded_file_is_known_until_it_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = old_file(dir.path(), "one");
        // (its status-change time is now: racy, so not recorded yet)
        let index = index_with(dir.path(), &file, &id("one"));
        assert_eq!(index.get(&file, &std::fs::metadata(&file).unwrap()), None, "racily recent");
        std::thread::sleep(RACY + Duration::from_millis(100));
        let index = index_with(dir.path(), &file, &id("one"));
        let found = index.get(&file, &std::fs::metadata(&file).unwrap());
        assert_eq!(found, Some(id("one")));
        // rewritten with the same size and its old modification time: the
        // status-change time still tells
        std::fs::write(&file, "two").unwrap();
        let past = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options().write(true).open(&file).unwrap().set_modified(past).unwrap();
        assert_eq!(index.get(&file, &std::fs::metadata(&file).unwrap()), None);
    }

    #[test]
    fn a_damaged_index_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let file = old_file(dir.path(), "one");
        for damage in ["", "{", "[1, 2]", "{\"/x\": {\"stat\": 1}}"] {
            std::fs::write(dir.path().join("hashes.json"), damage).unwrap();
            let index = HashIndex::load(dir.path().join("hashes.json"));
            assert_eq!(index.get(&file, &std::fs::metadata(&file).unwrap()), None, "{damage:?}");
        }
    }
}
