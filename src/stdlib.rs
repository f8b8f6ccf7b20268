//! The stdlib (`stdlib/` in the repository) compiled into the binary, so an
//! installed kdeploy needs no files beside it. `--stdlib DIR` or
//! `KDEPLOY_STDLIB` use a directory instead, for stdlib development.

use std::collections::BTreeMap;
use std::path::PathBuf;

use include_dir::{include_dir, Dir};
use kdeploy_lang::io::Stdlib;

static STDLIB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/stdlib");

fn collect(dir: &'static Dir<'static>, out: &mut BTreeMap<String, &'static [u8]>) {
    for f in dir.files() {
        out.insert(f.path().to_string_lossy().into_owned(), f.contents());
    }
    for d in dir.dirs() {
        collect(d, out);
    }
}

pub fn stdlib(dir: Option<PathBuf>) -> Stdlib {
    if let Some(d) = dir.or_else(|| std::env::var_os("KDEPLOY_STDLIB").map(PathBuf::from)) {
        return Stdlib::Dir(d);
    }
    let mut files = BTreeMap::new();
    collect(&STDLIB, &mut files);
    Stdlib::Embedded(files)
}
