//! Path values as strings: normalisation (`.`, `..`, repeated slashes) and
//! the virtual `<kdeploy>` root under which the embedded stdlib lives.
//! `..` never climbs above a root, as in Nix (`/..` is `/`).

/// The prefix of paths inside the embedded stdlib.
pub const STDLIB_ROOT: &str = "<kdeploy>";

/// Splits a path into its root ("/" or "<kdeploy>") and the rest.
fn split_root(path: &str) -> (&str, &str) {
    if let Some(rest) = path.strip_prefix(STDLIB_ROOT) {
        (STDLIB_ROOT, rest)
    } else if let Some(rest) = path.strip_prefix('/') {
        ("/", rest)
    } else {
        ("", path)
    }
}

pub fn normalize(path: &str) -> String {
    let (root, rest) = split_root(path);
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    match root {
        "/" => format!("/{joined}"),
        "" => joined,
        r if joined.is_empty() => r.to_string(),
        r => format!("{r}/{joined}"),
    }
}

pub fn is_absolute(path: &str) -> bool {
    path.starts_with('/') || path.starts_with(STDLIB_ROOT)
}

/// `dirOf` for paths and strings: everything before the last slash.
pub fn dir_of(path: &str) -> String {
    let trimmed = path;
    match trimmed.rfind('/') {
        None => {
            if trimmed == STDLIB_ROOT {
                STDLIB_ROOT.to_string()
            } else {
                ".".to_string()
            }
        }
        Some(0) => "/".to_string(),
        Some(i) => trimmed[..i].to_string(),
    }
}

/// `baseNameOf`: the part after the last slash, ignoring one trailing slash.
pub fn base_name(path: &str) -> &str {
    let p = path.strip_suffix('/').unwrap_or(path);
    match p.rfind('/') {
        None => p,
        Some(i) => &p[i + 1..],
    }
}

pub fn join(dir: &str, rel: &str) -> String {
    normalize(&format!("{dir}/{rel}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_dots_and_slashes() {
        assert_eq!(normalize("/a/./b//c/../d"), "/a/b/d");
        assert_eq!(normalize("/.."), "/");
        assert_eq!(normalize("<kdeploy>/phases/../default.nix"), "<kdeploy>/default.nix");
        assert_eq!(normalize("<kdeploy>/.."), "<kdeploy>");
    }

    #[test]
    fn dir_and_base() {
        assert_eq!(dir_of("/a/b"), "/a");
        assert_eq!(dir_of("/a"), "/");
        assert_eq!(dir_of("a"), ".");
        assert_eq!(dir_of("<kdeploy>/x.nix"), "<kdeploy>");
        assert_eq!(base_name("/a/b/"), "b");
        assert_eq!(base_name("x"), "x");
    }
}
