//! `switch`: converge the selected nodes onto their closures.
//!
//! connect (parallel, bounded; host keys verified) → install the node
//! program, lock, `status` → committed hash equal: unchanged, done → read
//! the rest of the changed nodes' state and plan → push missing blobs and
//! stage (nothing live changes yet) → phase by phase, all nodes of a phase
//! concurrently, barrier between phases → commit each node and record the
//! generation on the deployer. Any failure: finish the phase in flight,
//! then switch every touched phase of every node back (reverse order) and
//! stop. Any unreachable or locked node: stop before changing anything.
//!
//! Everything after connecting is [`switch_reached`], over any [`Host`]
//! with the node program under a prefix, so tests drive the executor over
//! `LocalHost` on directories (`tests/deploy_local.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::future::join_all;

use super::apply::{self, Fail};
use super::connect::{connect_reporting, lock_owner, SshSettings};
use super::events::{Event, Sink};
use super::manifest::phase_manifest;
use super::plan::{self, Deployed, NodePlan, PhaseAction, PhaseInput, RecordedPhase};
use super::record::{self, Generation, NodeRecord};
use super::state;
use super::wave;
use crate::closure::{Closures, Source};
use crate::node::{changed_files, Manifest, Node, NodeLock, NodeStatus};
use crate::store::{ContentId, Digest, Readable, Resolver};
use crate::transport::Host;

#[derive(Debug, Clone, Default)]
pub struct SwitchOptions {
    /// Node names or roles; empty: every node.
    pub on: Vec<String>,
    pub dry_run: bool,
    pub parallel: usize,
    pub ssh: SshSettings,
    /// `.kdeploy` of the project (generation records).
    pub state_dir: PathBuf,
}

/// How a run ended (maps to the exit code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// A phase failed (rolled back) or a node was locked: exit 3.
    Failed,
    /// Some node could not be reached; nothing was changed: exit 4.
    Unreachable,
}

/// The nodes `--on` selects (names or roles), or an error naming the unknown.
pub fn select(closures: &Closures, on: &[String]) -> Result<Vec<String>, String> {
    if on.is_empty() {
        return Ok(closures.cluster.nodes.keys().cloned().collect());
    }
    let mut out = BTreeSet::new();
    for want in on.iter().flat_map(|s| s.split(',')).filter(|s| !s.is_empty()) {
        let hits: Vec<&String> = closures
            .cluster
            .nodes
            .iter()
            .filter(|(n, node)| *n == want || node.roles.iter().any(|r| r == want))
            .map(|(n, _)| n)
            .collect();
        if hits.is_empty() {
            return Err(format!("--on {want}: no node or role of that name in cluster {}", closures.cluster.name));
        }
        out.extend(hits.into_iter().cloned());
    }
    Ok(out.into_iter().collect())
}

/// A node we hold: connection, node program handle, lock, state, plan.
struct Held<'h> {
    name: String,
    node: Node<'h>,
    lock: NodeLock,
    status: NodeStatus,
    deployed: Deployed,
    plan: NodePlan,
    /// New manifest per phase index (changed nodes only).
    manifests: Vec<Manifest>,
    sources: BTreeMap<Digest, Source>,
}

fn blob_digest(resolver: &Resolver, source: &Source, cid: &ContentId) -> Result<Digest, String> {
    match cid {
        ContentId::Blob { digest, .. } => Ok(*digest),
        ContentId::Artifact { .. } => resolver.store_source(source).map_err(|e| e.0),
        ContentId::Secret { keyed: Some(k), .. } => Ok(*k),
        ContentId::Secret { name, keyed: None } => Err(format!("secret {name} is not made yet")),
    }
}

/// Every blob a node's changed phases need, with the source of its bytes.
fn needed_blobs(held: &Held<'_>) -> BTreeMap<Digest, Source> {
    let mut out = BTreeMap::new();
    for (pp, m) in held.plan.phases.iter().zip(&held.manifests) {
        if !matches!(pp.action, PhaseAction::Activate | PhaseAction::StageOnly) {
            continue;
        }
        for f in &m.files {
            let d = Digest::parse(&f.hash).expect("manifests carry hex digests");
            if let Some(s) = held.sources.get(&d) {
                out.insert(d, s.clone());
            }
        }
    }
    out
}

/// A blob ready to send: where its bytes are and their sha256 (which the
/// node checks on arrival; `None` for a secret, which travels outside the
/// blob store and is checked by length: even an unkeyed hash of it must not
/// reach a node's command line). Shared by every node that lacks the blob.
type Blob = Arc<(Readable, Option<String>)>;

fn blob_source(
    cache: &Mutex<HashMap<Digest, Blob>>,
    resolver: &Resolver,
    d: &Digest,
    s: &Source,
) -> Result<Blob, String> {
    if let Some(b) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(d) {
        return Ok(b.clone());
    }
    let readable = resolver.readable(s).map_err(|e| e.0)?;
    let sha = match s {
        Source::Secret(_) => None,
        _ => Some(readable.sha256().map_err(|e| e.0)?),
    };
    let b = Arc::new((readable, sha));
    cache.lock().unwrap_or_else(|p| p.into_inner()).insert(*d, b.clone());
    Ok(b)
}

/// Streams one blob to a node: a file is read in chunks as the connection
/// takes them, so memory stays flat however large the binaries are.
async fn send_blob(node: &Node<'_>, hash: &str, blob: &Blob) -> Result<u64, String> {
    let (readable, sha) = &**blob;
    match (readable, sha) {
        (Readable::Bytes(b), None) => {
            node.put_secret(hash, b).await.map_err(|e| e.to_string())?;
            Ok(b.len() as u64)
        }
        (Readable::Path(_), None) => Err(format!("secret {hash} must be sent from memory")),
        (Readable::Bytes(b), Some(sha)) => {
            node.put_bytes(hash, sha, b).await.map_err(|e| e.to_string())?;
            Ok(b.len() as u64)
        }
        (Readable::Path(p), Some(sha)) => {
            let mut f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let len = f.metadata().map_err(|e| format!("{}: {e}", p.display()))?.len();
            node.put(hash, sha, &mut f).await.map_err(|e| e.to_string())?;
            Ok(len)
        }
    }
}

/// A node's manifests (one per phase), the source of each blob they name,
/// and the files left out (see [`node_manifests`]).
type NodeManifests = (Vec<Manifest>, BTreeMap<Digest, Source>, Vec<String>);

/// New manifests for every phase of a node, the source of every blob, and
/// the files left out of generate-only phases because their artifact is
/// not available offline (such a phase is never activated; staging it
/// without them beats refusing the whole switch).
fn node_manifests(closures: &Closures, name: &str, resolver: &Resolver) -> Result<NodeManifests, String> {
    let node = &closures.cluster.nodes[name];
    let nc = &closures.nodes[name];
    let mut sources = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut manifests = Vec::new();
    for (p, pc) in node.phases.iter().zip(&nc.phases) {
        let mut phase = p.clone();
        let mut blobs = Vec::new();
        phase.files.clear();
        for (f, cid) in p.files.iter().zip(&pc.files) {
            match blob_digest(resolver, &f.source, cid) {
                Ok(d) => {
                    sources.insert(d, f.source.clone());
                    blobs.push(d);
                    phase.files.push(f.clone());
                }
                Err(e) if !p.activate => skipped.push(format!("{} {}: {e}", p.name, f.path)),
                Err(e) => return Err(e),
            }
        }
        for (u, d) in p.units.iter().zip(&pc.units) {
            sources.insert(*d, Source::Text(u.text.clone()));
        }
        manifests.push(phase_manifest(&phase, pc, &blobs));
    }
    Ok((manifests, sources, skipped))
}

/// The plan text for `--dry-run`.
pub fn plan_text(name: &str, plan: &NodePlan) -> String {
    if plan.unchanged {
        return format!("{name}: unchanged\n");
    }
    let mut s = format!("{name}: changed\n");
    for p in &plan.phases {
        let what = match p.action {
            PhaseAction::Unchanged => continue,
            PhaseAction::Activate => "activate",
            PhaseAction::StageOnly => "stage only (generated, not activated)",
            PhaseAction::Remove => "remove",
        };
        s += &format!("  {} : {what}\n", p.name);
        for (k, v) in [("add", &p.files.added), ("change", &p.files.changed), ("remove", &p.files.removed)] {
            for f in v {
                s += &format!("      {k:<7}{f}\n");
            }
        }
        let u = &p.units;
        for (k, v) in [("stop", &u.stop), ("start", &u.start), ("restart", &u.restart), ("reload", &u.reload)] {
            if !v.is_empty() {
                s += &format!("      {k} {}\n", v.join(", "));
            }
        }
    }
    s
}

/// Records generation `number` of this cluster on the deployer.
fn write_generation(
    closures: &Closures,
    opts: &SwitchOptions,
    number: u64,
    nodes: BTreeMap<String, NodeRecord>,
) -> Result<(), String> {
    let g = Generation {
        number,
        cluster: closures.cluster.name.clone(),
        time: record::now(),
        phase_order: closures.cluster.phase_order.clone(),
        rollback_of: None,
        nodes,
    };
    record::write(&opts.state_dir, &g)
}

/// A node the run has reached: its connection, whatever the transport, and
/// the directory the node program keeps everything under ("" on a real
/// node; a scratch directory when a test drives a switch over
/// [`crate::transport::LocalHost`]).
#[derive(Clone, Copy)]
pub struct Reached<'h> {
    pub host: &'h dyn Host,
    pub prefix: &'h str,
}

/// Run a switch. Returns the outcome and, for `--dry-run`, the plan text.
pub async fn switch(
    closures: &Closures,
    resolver: &Resolver,
    opts: &SwitchOptions,
    sink: &dyn Sink,
) -> Result<(Outcome, String), String> {
    let selected = select(closures, &opts.on)?;
    let targets: Vec<_> = selected
        .iter()
        .map(|n| {
            let node = &closures.cluster.nodes[n];
            let s = &node.ssh;
            opts.ssh.target(n, &node.address, &s.user, s.port, s.key.as_deref(), s.jump_host.as_deref())
        })
        .collect::<Result<_, _>>()?;

    // 1. connect
    let (hosts, unreachable) = connect_reporting(&targets, opts.parallel, sink).await;
    let reached: Vec<Reached<'_>> = hosts.iter().map(|h| Reached { host: h, prefix: "" }).collect();
    let result = switch_reached(closures, resolver, opts, &reached, unreachable, sink).await;
    join_all(hosts.iter().map(|h| h.close())).await;
    result
}

/// Steps 2 to 7 of a switch on the nodes already reached (each must be a
/// node of `closures`, by its host's name). `some_unreachable`: other
/// selected nodes were not reached, so nothing may change. The
/// connections stay open; closing them is the caller's.
pub async fn switch_reached(
    closures: &Closures,
    resolver: &Resolver,
    opts: &SwitchOptions,
    nodes: &[Reached<'_>],
    some_unreachable: bool,
    sink: &dyn Sink,
) -> Result<(Outcome, String), String> {
    // 2. install, lock, status — one node task each, concurrently
    let owner = lock_owner("switch");
    let opened = join_all(nodes.iter().map(|r| async {
        let node = Node::install_with_prefix(r.host, r.prefix).await?;
        let lock = node.lock(&owner).await?;
        let status = node.status().await?;
        Ok::<_, crate::node::NodeError>((node, lock, status))
    }))
    .await;
    let mut held: Vec<Held<'_>> = Vec::new();
    let mut failed = false;
    for (r, opened) in nodes.iter().zip(opened) {
        let h = r.host;
        match opened {
            Ok((node, lock, status)) => held.push(Held {
                name: h.name().to_string(),
                node,
                lock,
                status,
                deployed: Deployed::default(),
                plan: NodePlan::unchanged(),
                manifests: Vec::new(),
                sources: BTreeMap::new(),
            }),
            Err(e) => {
                failed = true;
                sink.emit(Fail::msg(None, e.to_string()).event(h.name()));
            }
        }
    }
    if some_unreachable || failed {
        release(held).await;
        return Ok((if some_unreachable { Outcome::Unreachable } else { Outcome::Failed }, String::new()));
    }

    // 3. unchanged nodes are done; read and plan the others
    let mut changed_idx = Vec::new();
    for (i, h) in held.iter_mut().enumerate() {
        let nc = &closures.nodes[&h.name];
        if plan::node_unchanged(&nc.hash, h.status.current.as_ref()) {
            sink.emit(Event::NodeUnchanged { node: h.name.clone() });
        } else {
            changed_idx.push(i);
        }
    }
    let states = join_all(changed_idx.iter().map(|&i| state::read_deployed(&held[i].node, &held[i].status))).await;
    let mut plan_error = None;
    for (&i, st) in changed_idx.iter().zip(states) {
        let h = &mut held[i];
        match st {
            Ok(d) => h.deployed = d,
            Err(e) => {
                plan_error.get_or_insert_with(|| e.to_string());
                continue;
            }
        }
        match node_manifests(closures, &h.name, resolver) {
            Ok((m, src, skipped)) => {
                h.manifests = m;
                h.sources = src;
                for s in skipped {
                    sink.emit(Event::Warning {
                        node: h.name.clone(),
                        message: format!("not staged (generate-only phase): {s}"),
                    });
                }
            }
            Err(e) => {
                plan_error.get_or_insert(e);
                continue;
            }
        }
        let node = &closures.cluster.nodes[&h.name];
        let nc = &closures.nodes[&h.name];
        let inputs: Vec<PhaseInput<'_>> = node
            .phases
            .iter()
            .zip(&nc.phases)
            .zip(&h.manifests)
            .map(|((p, pc), m)| PhaseInput { name: &p.name, hash: pc.hash, activate: p.activate, manifest: m })
            .collect();
        h.plan = plan::plan_node(&inputs, &h.deployed);
        let names = |a: PhaseAction| h.plan.phases.iter().filter(|p| p.action == a).map(|p| p.name.clone()).collect();
        sink.emit(Event::NodeChanged {
            node: h.name.clone(),
            activate: names(PhaseAction::Activate),
            stage: names(PhaseAction::StageOnly),
            remove: names(PhaseAction::Remove),
        });
    }
    if let Some(e) = plan_error {
        release(held).await;
        return Err(e);
    }
    if opts.dry_run {
        let text: String = held.iter().map(|h| plan_text(&h.name, &h.plan)).collect();
        release(held).await;
        return Ok((Outcome::Ok, text));
    }
    if changed_idx.is_empty() {
        // Nothing changed, but record where the nodes are when this
        // project's history does not say so yet (first switch from a new
        // checkout, or after a run from elsewhere): `rollback` needs it.
        let latest = record::latest(&opts.state_dir);
        let number = record::next_number(&opts.state_dir);
        let nodes = record_nodes(closures, opts, &held, &changed_idx, number);
        let same = latest.as_ref().is_some_and(|g| {
            g.cluster == closures.cluster.name
                && held.iter().all(|h| {
                    g.nodes
                        .get(&h.name)
                        .zip(nodes.get(&h.name))
                        .is_some_and(|(a, b)| a.generation == b.generation && a.hash == b.hash)
                })
        });
        if !same {
            write_generation(closures, opts, number, nodes)?;
        }
        release(held).await;
        return Ok((Outcome::Ok, String::new()));
    }

    // 4. one generation number for the run, free on every changed node
    let gen = changed_idx
        .iter()
        .map(|&i| held[i].status.next)
        .chain([record::next_number(&opts.state_dir)])
        .max()
        .unwrap_or(1);

    // 5. push missing blobs and stage; nothing live changes
    let cache = Mutex::new(HashMap::new());
    let pushed = join_all(changed_idx.iter().map(|&i| {
        let h = &held[i];
        let cache = &cache;
        async move {
            let t0 = Instant::now();
            let blobs = needed_blobs(h);
            let hashes: Vec<String> = blobs.keys().map(Digest::hex).collect();
            let missing = h.node.missing(&hashes).await.map_err(|e| Fail::msg(None, e.to_string()))?;
            let mut bytes_sent = 0u64;
            for m in &missing {
                let d = Digest::parse(m).ok_or_else(|| Fail::msg(None, format!("node answered a bad hash {m:?}")))?;
                let b = blob_source(cache, resolver, &d, &blobs[&d]).map_err(|e| Fail::msg(None, e))?;
                bytes_sent += send_blob(&h.node, m, &b).await.map_err(|e| Fail::msg(None, e))?;
            }
            for (pp, m) in h.plan.phases.iter().zip(&h.manifests) {
                if matches!(pp.action, PhaseAction::Activate | PhaseAction::StageOnly) {
                    h.node.stage(gen, &pp.name, m).await.map_err(|e| Fail::msg(Some(&pp.name), e.to_string()))?;
                }
            }
            sink.emit(Event::BlobsPushed {
                node: h.name.clone(),
                count: missing.len(),
                bytes: bytes_sent,
                took: t0.elapsed(),
            });
            Ok::<_, Fail>(())
        }
    }))
    .await;
    for (&i, r) in changed_idx.iter().zip(&pushed) {
        if let Err(f) = r {
            failed = true;
            sink.emit(f.event(&held[i].name));
        }
    }
    if failed {
        release(held).await;
        return Ok((Outcome::Failed, String::new()));
    }

    // 6. phases in order, barrier between them; removed phases last
    let mut order: Vec<String> = closures.cluster.phase_order.clone();
    for &i in &changed_idx {
        for p in &held[i].plan.phases {
            if !order.contains(&p.name) {
                order.push(p.name.clone());
            }
        }
    }
    // per node: phases switched in this run, in order (for rollback)
    let mut touched = wave::Touched::new();
    for phase in &order {
        let on: Vec<(usize, usize)> = changed_idx
            .iter()
            .filter_map(|&i| {
                let k = held[i].plan.phases.iter().position(|p| &p.name == phase)?;
                matches!(held[i].plan.phases[k].action, PhaseAction::Activate | PhaseAction::Remove).then_some((i, k))
            })
            .collect();
        if on.is_empty() {
            continue;
        }
        let name = |i: usize| held[i].name.clone();
        // a failed phase may be half done (link flipped, unit failed): it is rolled back too
        failed = wave::run_phase(phase, &on, name, &mut touched, sink, |i, k| {
            let h = &held[i];
            let schema = closures.cluster.nodes[&h.name].phases.iter().find(|p| &p.name == phase);
            apply::activate(&h.node, schema, &h.plan.phases[k], gen, sink)
        })
        .await;
        if failed {
            break;
        }
    }

    if failed {
        rollback_touched(&held, &touched, sink).await;
        release(held).await;
        return Ok((Outcome::Failed, String::new()));
    }

    // 7. commit on every changed node, then record on the deployer
    let commits = join_all(changed_idx.iter().map(|&i| {
        let h = &held[i];
        async move {
            let mut rec = BTreeMap::new();
            for (p, pp) in closures.cluster.nodes[&h.name].phases.iter().zip(&h.plan.phases) {
                let r = match pp.action {
                    PhaseAction::Unchanged => match h.deployed.recorded.get(&p.name) {
                        Some(r) => r.clone(),
                        None => continue,
                    },
                    PhaseAction::Activate | PhaseAction::StageOnly => {
                        RecordedPhase { hash: pp.hash.expect("new phase"), generation: gen, active: p.activate }
                    }
                    PhaseAction::Remove => continue,
                };
                rec.insert(p.name.clone(), r);
            }
            state::commit(&h.node, gen, &closures.nodes[&h.name].hash, &rec).await
        }
    }))
    .await;
    for (&i, r) in changed_idx.iter().zip(commits) {
        match r {
            Ok(()) => sink.emit(Event::Committed { node: held[i].name.clone(), generation: gen }),
            Err(e) => {
                failed = true;
                sink.emit(Fail::msg(None, e).event(&held[i].name));
            }
        }
    }
    let nodes = record_nodes(closures, opts, &held, &changed_idx, gen);
    write_generation(closures, opts, gen, nodes)?;
    release(held).await;
    Ok((if failed { Outcome::Failed } else { Outcome::Ok }, String::new()))
}

/// The per-node part of the deployer record after a run: the latest record's
/// nodes updated with the nodes held (changed ones now on `gen`).
fn record_nodes(
    closures: &Closures,
    opts: &SwitchOptions,
    held: &[Held<'_>],
    changed_idx: &[usize],
    gen: u64,
) -> BTreeMap<String, NodeRecord> {
    let mut nodes = record::latest(&opts.state_dir).map(|g| g.nodes).unwrap_or_default();
    for h in held {
        let n = &closures.cluster.nodes[&h.name];
        let committed_gen = if changed_idx.iter().any(|&i| held[i].name == h.name) {
            gen
        } else {
            h.status.current.as_ref().map_or(0, |c| c.0)
        };
        nodes.insert(
            h.name.clone(),
            NodeRecord {
                address: n.address.clone(),
                user: n.ssh.user.clone(),
                port: n.ssh.port,
                key: opts.ssh.key.as_ref().map(|k| k.display().to_string()).or_else(|| n.ssh.key.clone()),
                jump_host: opts.ssh.jump_host.as_ref().map(|j| j.to_string()).or_else(|| n.ssh.jump_host.clone()),
                generation: committed_gen,
                hash: closures.nodes[&h.name].hash.hex(),
            },
        );
    }
    nodes.retain(|n, _| closures.cluster.nodes.contains_key(n));
    nodes
}

/// Switch every touched phase of every node back to the generation it was
/// on before the run, last phase first, all nodes concurrently per phase.
async fn rollback_touched(held: &[Held<'_>], touched: &BTreeMap<usize, Vec<usize>>, sink: &dyn Sink) {
    join_all(touched.iter().map(|(&i, ks)| {
        let h = &held[i];
        async move {
            // files changed by the run, for restart triggers on the way back
            let mut changed = BTreeSet::new();
            for &k in ks {
                let pp = &h.plan.phases[k];
                let new = h.manifests.get(k).filter(|_| pp.action == PhaseAction::Activate);
                changed.extend(changed_files(h.deployed.manifests.get(&pp.name), new));
            }
            for &k in ks.iter().rev() {
                let pp = &h.plan.phases[k];
                let from = h.manifests.get(k).filter(|_| pp.action == PhaseAction::Activate);
                let to_m = pp.old_generation.and_then(|_| h.deployed.manifests.get(&pp.name));
                match apply::switch_back(&h.node, &pp.name, from, pp.old_generation, to_m, &changed, sink).await {
                    Ok(()) => sink.emit(Event::RolledBack { node: h.name.clone(), phase: pp.name.clone() }),
                    Err(f) => sink.emit(Event::RollbackFailed {
                        node: h.name.clone(),
                        phase: pp.name.clone(),
                        message: format!("{}{}", f.message, f.journal.map(|j| format!("\n{j}")).unwrap_or_default()),
                    }),
                }
            }
        }
    }))
    .await;
}

/// Let go of every lock (the connections are the caller's to close).
async fn release(held: Vec<Held<'_>>) {
    join_all(held.into_iter().map(|h| h.lock.release())).await;
}
