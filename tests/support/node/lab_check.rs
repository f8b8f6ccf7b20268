//! The one check every lab switch test ends with: what is deployed on each
//! node is exactly what `kdeploy eval` says. Per node: the committed node
//! hash and each recorded phase hash equal the closure's; exactly the
//! activated phases are linked, into the recorded generation; every managed
//! path of an activated phase is a link through its phase link, and every
//! file (activated or only staged) has the closure's mode, owner, group and
//! the bytes `kdeploy eval --node N --file P` prints (compared by sha256,
//! after checking that those bytes hash to the closure's blake3; a secret
//! against the deployer's secret store, as eval prints a placeholder); managed
//! directories have their mode and owner; units are active and enabled
//! exactly when their phase is activated and they are meant to be; and the
//! etcd members form one cluster whose member list names exactly the
//! expected members. All differences are collected and reported at once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use super::repo;

const ROOT: &str = "/var/lib/kdeploy";

/// Panics, listing every difference, unless the lab holds exactly what
/// `cluster` evaluates to.
pub fn assert_deployed(cluster: &Path) {
    let problems = deployed_differences(cluster);
    assert!(
        problems.is_empty(),
        "the lab differs from `kdeploy eval {}`:\n  {}",
        cluster.display(),
        problems.join("\n  ")
    );
}

/// Every difference between the lab and `cluster`, one line each.
pub fn deployed_differences(cluster: &Path) -> Vec<String> {
    let closures = eval_closures(cluster);
    let nodes = closures["nodes"].as_object().expect("closures have nodes").clone();
    let sums = content_sums(cluster, &nodes);
    let mut problems: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = nodes
            .iter()
            .map(|(name, node)| {
                let sums = &sums;
                s.spawn(move || check_node(name, node, sums))
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("node check thread")).collect()
    });
    problems.extend(check_etcd(&nodes));
    problems
}

/// `kdeploy ARGS` with the secret store `secrets` (the test's lane's:
/// passed, since threads this module spawns are in no lane).
fn kdeploy(args: &[&str], secrets: &Path) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .args(args)
        .env_remove("KDEPLOY_STDLIB")
        .env("KDEPLOY_SECRETS", secrets)
        .output()
        .unwrap();
    assert!(out.status.success(), "kdeploy {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn eval_closures(cluster: &Path) -> Value {
    serde_json::from_slice(&kdeploy(&["eval", cluster.to_str().unwrap(), "--closures"], &super::lab_secrets()))
        .expect("closures JSON")
}

/// Lab index of a node from its address (10.77.0.1X → X).
fn lab_index(node: &Value) -> u32 {
    let addr = node["address"].as_str().expect("node address");
    addr.strip_prefix("10.77.0.").and_then(|x| x.parse::<u32>().ok()).map(|x| x - 10).expect("a lab address")
}

/// Runs `script` as root inside lab node `i` (`lab.sh exec`: no SSH, so a
/// node whose sshd refuses root can be checked too); stdout, exit status.
fn ssh(i: u32, script: &str) -> (bool, String) {
    let out = Command::new(repo().join("lab/lab.sh")).args(["exec", &i.to_string(), script]).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// sha256 of each content the closures name, keyed by the closure's
/// content id (`blake3:…`, or `sha256:<archive>!<member>` for a member of
/// a downloaded archive). The bytes come from `kdeploy eval --node N
/// --file P` and must hash to that blake3, which ties the printed file to
/// the hashed closure (a member is tied by its archive's checksum, which
/// the engine verified before extracting it). Contents are the same across runs of a test
/// binary, so they are computed once (the eval of a 50 MB binary is not free).
fn is_member(content: &str) -> bool {
    content.starts_with("sha256:") && content.contains('!')
}

fn content_sums(cluster: &Path, nodes: &serde_json::Map<String, Value>) -> HashMap<String, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut wanted: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (name, node) in nodes {
        for f in node["phases"].as_array().unwrap().iter().flat_map(|p| p["files"].as_array().unwrap()) {
            let content = f["content"].as_str().unwrap().to_string();
            let derived = content.starts_with("blake3:") || is_member(&content);
            if derived && !cache.lock().unwrap().contains_key(&content) {
                wanted.entry(content).or_insert_with(|| (name.clone(), f["path"].as_str().unwrap().to_string()));
            }
        }
    }
    let work = Mutex::new(wanted.into_iter());
    let secrets = super::lab_secrets();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let Some((content, (node, path))) = work.lock().unwrap().next() else { break };
                let bytes = kdeploy(&["eval", cluster.to_str().unwrap(), "--node", &node, "--file", &path], &secrets);
                let b3 = format!("blake3:{}", blake3::hash(&bytes).to_hex());
                assert!(
                    is_member(&content) || b3 == content,
                    "`kdeploy eval --node {node} --file {path}` prints other bytes than the closure hashed"
                );
                cache.lock().unwrap().insert(content, hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes)));
            });
        }
    });
    let mut sums = cache.lock().unwrap().clone();
    sums.extend(secret_sums());
    sums
}

/// sha256 of every secret in the lab's secret store (every lab test
/// deploys from it: `KDEPLOY_SECRETS`), keyed by the closure's content id
/// `secret:<keyed blake3>`: `kdeploy eval --file` prints only a placeholder
/// for a secret, so the deployed bytes are compared with the store's.
fn secret_sums() -> HashMap<String, String> {
    let dir = super::lab_secrets();
    let Ok(key) = std::fs::read(dir.join("hash.key")) else { return HashMap::new() };
    let key: [u8; 32] = key.try_into().expect("a 32-byte hash.key");
    let mut out = HashMap::new();
    let mut todo = vec![dir];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                let id = format!("secret:{}", blake3::keyed_hash(&key, &bytes).to_hex());
                out.insert(id, hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes)));
            }
        }
    }
    out
}

/// What one node reported: committed line, record, links, and one line per
/// inspected path.
struct Reported {
    current: String,
    record: BTreeMap<String, (String, String, bool)>,
    links: BTreeMap<String, String>,
}

fn read_state(i: u32) -> Result<Reported, String> {
    let script = format!(
        "cd {ROOT} || exit 1; echo \"@current $(cat current)\"; g=$(cut -d' ' -f1 current); \
         echo @record; cat generations/$g/kdeploy-phases; echo @links; \
         for l in phases/*; do [ -L \"$l\" ] && echo \"${{l#phases/}} $(readlink \"$l\")\"; done; true"
    );
    let (ok, out) = ssh(i, &script);
    if !ok {
        return Err(format!("cannot read {ROOT} on lab node {i}: {out}"));
    }
    let mut r = Reported { current: String::new(), record: BTreeMap::new(), links: BTreeMap::new() };
    let mut section = "";
    for line in out.lines() {
        match line {
            "@record" | "@links" => section = line,
            l if l.starts_with("@current ") => r.current = l["@current ".len()..].to_string(),
            l if section == "@record" => {
                if let [name, hash, gen, active] = l.split('\t').collect::<Vec<_>>()[..] {
                    r.record.insert(name.into(), (hash.into(), gen.into(), active == "1"));
                }
            }
            l if section == "@links" => {
                if let Some((name, target)) = l.split_once(' ') {
                    r.links.insert(name.into(), target.into());
                }
            }
            _ => {}
        }
    }
    Ok(r)
}

fn check_node(name: &str, node: &Value, sums: &HashMap<String, String>) -> Vec<String> {
    let i = lab_index(node);
    let mut problems = Vec::new();
    let mut bad = |m: String| problems.push(format!("{name}: {m}"));
    let st = match read_state(i) {
        Ok(st) => st,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    let hash = node["hash"].as_str().unwrap();
    if st.current.split(' ').nth(1) != Some(hash) {
        bad(format!("committed `{}`, closure hash {hash}", st.current));
    }
    let phases = node["phases"].as_array().unwrap();
    let names: BTreeSet<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    for p in st.record.keys().filter(|p| !names.contains(p.as_str())) {
        bad(format!("phase {p} recorded on the node but not in the closure"));
    }
    let mut probes = Vec::new();
    for p in phases {
        let phase = p["name"].as_str().unwrap();
        let active = p["activate"].as_bool().unwrap();
        let Some((rhash, gen, ractive)) = st.record.get(phase) else {
            bad(format!("phase {phase} not recorded on the node"));
            continue;
        };
        if rhash != p["hash"].as_str().unwrap() || *ractive != active {
            bad(format!("phase {phase}: recorded {rhash} active={ractive}, closure {} active={active}", p["hash"]));
        }
        let want_link = active.then(|| format!("../generations/{gen}/{phase}"));
        if st.links.get(phase) != want_link.as_ref() {
            bad(format!("phase {phase}: link {:?}, expected {want_link:?}", st.links.get(phase)));
        }
        probes.extend(phase_probes(p, phase, active, gen));
    }
    let script: String = probes.iter().map(|pr| pr.script()).collect::<Vec<_>>().join("; ");
    let (_, out) = ssh(i, &script);
    let seen: HashMap<&str, &str> = out.lines().filter_map(|l| l.split_once('\t')).collect();
    for pr in &probes {
        let got = seen.get(pr.id.as_str()).copied().unwrap_or("(no answer)");
        if let Some(m) = pr.verify(got, sums) {
            bad(m);
        }
    }
    problems
}

/// One thing to look at on the node, and what it must be.
struct Probe {
    id: String,
    /// Shell printing the observation after `id TAB`.
    observe: String,
    expect: Expect,
}

enum Expect {
    /// A file: link target (`None`: must be a plain file, for staged
    /// files), octal mode, owner, group and content id.
    File {
        link: Option<String>,
        mode: u32,
        owner: String,
        group: String,
        content: String,
        optional: bool,
    },
    Dir {
        mode: u32,
        owner: String,
        group: String,
    },
    /// A unit: `is-active` and `is-enabled` words.
    Unit {
        active: bool,
        enabled: bool,
    },
    /// A managed path of a staged phase: not a link into that phase.
    NotLinked,
}

impl Probe {
    fn script(&self) -> String {
        format!("printf '%s\\t%s\\n' '{}' \"$({} 2>&1 | tr '\\n' ' ')\"", self.id, self.observe)
    }

    fn verify(&self, got: &str, sums: &HashMap<String, String>) -> Option<String> {
        let got = got.trim();
        let want = match &self.expect {
            Expect::File { optional: true, .. } if got == "absent" => return None,
            Expect::File { link, mode, owner, group, content, .. } => {
                let whole = content.strip_prefix("sha256:").filter(|_| !is_member(content));
                let sha = whole.map(str::to_string).or_else(|| sums.get(content).cloned());
                let sha = sha.unwrap_or_else(|| format!("(no sum for {content})"));
                format!("{} {mode:o} {owner} {group} {sha}", link.as_deref().unwrap_or("-"))
            }
            Expect::Dir { mode, owner, group } => format!("{mode:o} {owner} {group}"),
            Expect::NotLinked => "0".to_string(),
            Expect::Unit { active, enabled } => format!(
                "{} {}",
                if *active { "active" } else { "inactive" },
                if *enabled { "enabled" } else { "disabled" }
            ),
        };
        (got != want).then(|| format!("{}: expected `{want}`, found `{got}`", self.id))
    }
}

fn octal(v: &Value) -> u32 {
    u32::from_str_radix(v.as_str().unwrap(), 8).expect("octal mode")
}

fn phase_probes(p: &Value, phase: &str, active: bool, gen: &str) -> Vec<Probe> {
    let mut probes = Vec::new();
    for f in p["files"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        let content = f["content"].as_str().unwrap().to_string();
        // Active files are checked where a user reads them; staged ones in
        // their generation (their managed path must not point at them).
        let (at, link) = if active {
            (path.to_string(), Some(format!("{ROOT}/phases/{phase}/files{path}")))
        } else {
            (format!("{ROOT}/generations/{gen}/{phase}/files{path}"), None)
        };
        probes.push(Probe {
            id: format!("{phase} file {path}"),
            observe: format!(
                "f={at}; if [ ! -e \"$f\" ]; then echo absent; exit 0; fi; \
                 echo \"$(readlink \"$f\" || echo -) $(stat -L -c '%a %U %G' \"$f\") $(sha256sum < \"$f\" | cut -d' ' -f1)\""
            ),
            expect: Expect::File {
                link,
                mode: octal(&f["mode"]),
                owner: f["owner"].as_str().unwrap().into(),
                group: f["group"].as_str().unwrap().into(),
                // A staged phase leaves out artifacts that were never
                // fetched (generate-only phases download nothing).
                optional: !active && content.starts_with("sha256:"),
                content,
            },
        });
        if !active {
            probes.push(Probe {
                id: format!("{phase} (staged) managed path {path}"),
                observe: format!("readlink {path} | grep -c '^{ROOT}/phases/{phase}/'"),
                expect: Expect::NotLinked,
            });
        }
    }
    if active {
        for d in p["directories"].as_array().unwrap() {
            let path = d["path"].as_str().unwrap();
            probes.push(Probe {
                id: format!("{phase} directory {path}"),
                observe: format!("stat -c '%a %U %G' {path}"),
                expect: Expect::Dir {
                    mode: octal(&d["mode"]),
                    owner: d["owner"].as_str().unwrap().into(),
                    group: d["group"].as_str().unwrap().into(),
                },
            });
        }
    }
    for u in p["units"].as_array().unwrap() {
        let unit = u["name"].as_str().unwrap();
        let on = active && u["enable"].as_bool().unwrap();
        probes.push(Probe {
            id: format!("{phase} unit {unit}"),
            observe: format!(
                "echo $(systemctl is-active {unit}) $(systemctl is-enabled {unit} 2>/dev/null || echo disabled)"
            ),
            expect: Expect::Unit { active: on, enabled: on },
        });
    }
    probes
}

/// Every member answers for one cluster (the same cluster id), and each
/// lists exactly the configured members: three one-member clusters, or a
/// member left behind, fail here although `endpoint health` would pass.
fn check_etcd(nodes: &serde_json::Map<String, Value>) -> Vec<String> {
    let members: Vec<(String, u32)> = nodes
        .iter()
        .filter(|(_, n)| {
            n["phases"].as_array().unwrap().iter().any(|p| {
                p["activate"] == true
                    && p["units"].as_array().unwrap().iter().any(|u| u["name"] == "etcd.service" && u["enable"] == true)
            })
        })
        .map(|(name, n)| (name.clone(), lab_index(n)))
        .collect();
    if members.is_empty() {
        return vec![];
    }
    let mut problems = Vec::new();
    // (name, peer URLs) each member was configured with, from its
    // (already verified) /etc/etcd.env.
    let mut want = BTreeSet::new();
    let mut answers = Vec::new();
    for (name, i) in &members {
        let (_, env) = ssh(*i, "cat /etc/etcd.env");
        let var = |k: &str| env.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).unwrap_or("").to_string();
        want.insert((var("ETCD_NAME"), var("ETCD_INITIAL_ADVERTISE_PEER_URLS")));
        // Ask this node's own member (the env file's ETCDCTL_* settings, if
        // any, give credentials; the endpoint is the member itself).
        let (ok, out) = ssh(
            *i,
            "set -a; . /etc/etcd.env; unset ETCDCTL_ENDPOINTS; \
             etcdctl --endpoints=\"$ETCD_ADVERTISE_CLIENT_URLS\" member list -w json",
        );
        match serde_json::from_str::<Value>(&out) {
            Ok(v) if ok => answers.push((name.clone(), v)),
            _ => problems.push(format!("{name}: etcd member list failed: {out}")),
        }
    }
    let mut clusters = BTreeSet::new();
    for (name, v) in &answers {
        clusters.insert(v["header"]["cluster_id"].to_string());
        let got: BTreeSet<(String, String)> = v["members"]
            .as_array()
            .map(|ms| {
                ms.iter()
                    .map(|m| {
                        let peers: Vec<&str> =
                            m["peerURLs"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
                        (m["name"].as_str().unwrap_or("").to_string(), peers.join(","))
                    })
                    .collect()
            })
            .unwrap_or_default();
        if got != want {
            problems.push(format!("{name}: etcd members {got:?}, expected {want:?}"));
        }
    }
    if clusters.len() > 1 {
        problems.push(format!("etcd members answer for {} different clusters: {clusters:?}", clusters.len()));
    }
    problems
}
