//! Reading a cluster value into the engine's types (`schema::Cluster`),
//! straight from the evaluator, and — for large clusters evaluated from a
//! file — on several evaluators at once.
//!
//! Values hold `Rc`s, so one evaluator cannot be shared between threads.
//! But evaluation is pure: another evaluator given the same file, inputs
//! and stdlib computes the same value. So for a cluster of many nodes each
//! helper thread evaluates the file again, and every evaluator reads
//! batches of nodes, each taking the next batch no one has taken, so that
//! they finish together; what the nodes share is computed by every
//! evaluator, what is each node's own by one. `builtins.trace` messages of
//! a helper are printed after the run's own, less the ones the run printed
//! as well (the shared part traces in every evaluator); which evaluator
//! traces a node's messages may differ between runs. A batch a helper
//! fails on is read again by the run's own evaluator, so an error is always
//! reported by the session that holds its sources, and it is the first
//! failing node's in name order.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use kdeploy_lang::decode::DecodeError;
use kdeploy_lang::observed::Observation;
use kdeploy_lang::parse::Parses;
use kdeploy_lang::{Session, Value};

use super::inputs::{eval_file, Failure, Inputs};
use crate::closure::{self, Cluster, Node};
use crate::schema::Interning;

/// Clusters smaller than this are read by one evaluator: a helper's own
/// evaluation of the shared part would cost more than it saves.
pub const PARALLEL_FROM: usize = 200;

/// At most this many evaluators (each holds the shared part in memory).
const MAX_EVALUATORS: usize = 4;

/// How many evaluators a large cluster gets: `KDEPLOY_EVALUATORS`, else one
/// per core, at most [`MAX_EVALUATORS`].
fn evaluators() -> usize {
    match std::env::var("KDEPLOY_EVALUATORS").ok().and_then(|v| v.parse::<usize>().ok()) {
        Some(n) => n.max(1),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_EVALUATORS),
    }
}

/// Stack of a helper's evaluation thread, as the main one's (`main.rs`).
const HELPER_STACK: usize = 4 << 30;

/// Where a value came from, so that helpers can evaluate it again.
#[derive(Clone, Copy)]
pub struct Origin<'a> {
    pub inputs: &'a Inputs,
    pub file: &'a Path,
    pub attr: Option<&'a str>,
}

thread_local! {
    /// What `builtins.trace` printed on this thread (see [`trace_hook`]).
    static PRINTED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// How many printed messages are remembered: a run tracing more than this
/// may see a helper repeat some of them, but its memory stays bounded.
const REMEMBERED: usize = 1 << 16;

/// The trace hook of the run's own sessions: prints, and remembers what it
/// printed so that helpers' duplicates can be left out.
pub fn trace_hook() -> Box<dyn FnMut(&str)> {
    Box::new(|msg| {
        eprintln!("trace: {msg}");
        PRINTED.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < REMEMBERED {
                p.push(msg.to_string());
            }
        });
    })
}

/// The cluster value as the engine's types. A value that does not fit the
/// schema is printed and parsed again, so that the error names the node,
/// phase and field as `closure::parse_cluster` words them.
pub fn typed_cluster(session: &mut Session, v: &Value, origin: Option<Origin>) -> Result<Cluster, Failure> {
    let decoded = {
        let _shared = Interning::begin();
        decode_cluster(session, v, origin)
    };
    match decoded {
        Ok(c) if c.schema_version == closure::SCHEMA_VERSION => Ok(c),
        Err(DecodeError::Eval(e)) => Err(Failure::Eval(e)),
        _ => Ok(closure::parse_cluster(&session.to_json(v)?)?),
    }
}

fn decode_cluster(session: &mut Session, v: &Value, origin: Option<Origin>) -> Result<Cluster, DecodeError> {
    let top: closure::Top<serde::de::IgnoredAny> = session.decode(v)?;
    let all = session.select(v.clone(), "nodes", &[]).map_err(DecodeError::Eval)?;
    let names: Vec<String> = match &all {
        Value::Attrs(a) => a.keys().map(|k| k.to_string()).collect(),
        _ => vec![],
    };
    let evaluators = match origin {
        Some(_) if names.len() >= PARALLEL_FROM => evaluators(),
        _ => 1,
    };
    let batches: Vec<&[String]> = names.chunks(BATCH).collect();
    let next = AtomicUsize::new(0);
    let mut nodes = BTreeMap::new();
    let (mine, helped) = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..evaluators)
            .filter_map(|_| {
                let (origin, batches, next) = (origin.expect("helpers only with an origin"), &batches, &next);
                let parses = session.ev.parses.clone();
                std::thread::Builder::new()
                    .name("kdeploy-eval".into())
                    .stack_size(HELPER_STACK)
                    .spawn_scoped(scope, move || help(origin, parses, batches, next))
                    .ok()
            })
            .collect();
        let mut mine = Taken::default();
        while let Some(i) = take(&next, batches.len()) {
            match read_nodes(session, &all, batches[i], &mut nodes) {
                Ok(()) => mine.done.push(i),
                Err(e) => {
                    mine.failed = Some((i, e));
                    break;
                }
            }
        }
        let helped: Vec<Helped> = helpers.into_iter().filter_map(|h| h.join().ok()).collect();
        (mine, helped)
    });
    let mut done: Vec<bool> = vec![false; batches.len()];
    mine.done.iter().for_each(|&i| done[i] = true);
    for Helped { nodes: theirs, done: theirs_done, traces, observed } in helped {
        theirs_done.iter().for_each(|&i| done[i] = true);
        session.ev.io.add_observed(observed);
        nodes.extend(theirs);
        print_new_traces(traces);
    }
    // What no evaluator read — a helper's failed batch, or the rest after
    // a failure — is read here, in order: the error reported is the first
    // failing node's, whichever evaluator met it first.
    let mut failed = mine.failed;
    for (i, batch) in batches.iter().enumerate().filter(|(i, _)| !done[*i]) {
        match failed.take() {
            Some((j, e)) if j == i => return Err(e),
            f => failed = f,
        }
        read_nodes(session, &all, batch, &mut nodes)?;
    }
    Ok(top.with_nodes(nodes))
}

/// Nodes are read in batches of this many, each by whichever evaluator
/// is free next, so that evaluators finish together.
const BATCH: usize = 16;

/// The next batch no evaluator has taken yet.
fn take(next: &AtomicUsize, batches: usize) -> Option<usize> {
    Some(next.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < batches)
}

/// The batches the run's own evaluator read, and the one it failed on.
#[derive(Default)]
struct Taken {
    done: Vec<usize>,
    failed: Option<(usize, DecodeError)>,
}

fn read_nodes(
    session: &mut Session,
    all: &Value,
    names: &[String],
    into: &mut BTreeMap<String, Node>,
) -> Result<(), DecodeError> {
    session
        .decode_each(all, names, |name, node| {
            into.insert(name.to_string(), node);
        })
        .map_err(|e| e.under("nodes"))
}

struct Helped {
    nodes: BTreeMap<String, Node>,
    /// The batches read (a failed batch is not: the run's own evaluator
    /// reads it again, and reports the error).
    done: Vec<usize>,
    traces: Vec<String>,
    observed: Vec<Observation>,
}

/// A helper: evaluate the file again (with the syntax trees the run's own
/// evaluator made), then read batches until none is left or one fails. A helper that cannot evaluate the file reads none.
fn help(origin: Origin, parses: Parses, batches: &[&[String]], next: &AtomicUsize) -> Helped {
    let traces = Rc::new(RefCell::new(Vec::new()));
    let mut session = origin.inputs.session(Some(origin.file));
    // what it reads of its nodes' own is the run's as much as what the
    // run's own evaluator reads (the evaluation cache asks it all again)
    session.ev.io.observe();
    // the files the run's own evaluator parsed are not parsed again
    session.ev.parses = parses;
    let log = traces.clone();
    session.ev.trace = Box::new(move |msg| log.borrow_mut().push(msg.to_string()));
    let _shared = Interning::begin();
    let mut helped = Helped { nodes: BTreeMap::new(), done: Vec::new(), traces: Vec::new(), observed: Vec::new() };
    let all = eval_file(&mut session, origin.file, origin.attr, &origin.inputs.args())
        .and_then(|v| Ok(session.select(v, "nodes", &[])?));
    if let Ok(all) = all {
        while let Some(i) = take(next, batches.len()) {
            let mut nodes = BTreeMap::new();
            if read_nodes(&mut session, &all, batches[i], &mut nodes).is_err() {
                break;
            }
            helped.nodes.extend(nodes);
            helped.done.push(i);
        }
    }
    helped.observed = session.ev.io.observed();
    drop(session);
    helped.traces = Rc::try_unwrap(traces).map(RefCell::into_inner).unwrap_or_default();
    helped
}

/// A helper's trace messages, less as many of each as this thread printed
/// (every helper repeats the shared part's); those printed are remembered
/// as printed here.
fn print_new_traces(helper: Vec<String>) {
    let mut printed: BTreeMap<String, usize> = BTreeMap::new();
    PRINTED.with(|p| p.borrow().iter().for_each(|m| *printed.entry(m.clone()).or_default() += 1));
    let mut new = Vec::new();
    for msg in helper {
        match printed.get_mut(&msg) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                eprintln!("trace: {msg}");
                new.push(msg);
            }
        }
    }
    PRINTED.with(|p| {
        let mut p = p.borrow_mut();
        let room = REMEMBERED.saturating_sub(p.len());
        p.extend(new.into_iter().take(room));
    });
}

/// How many trace messages this thread has printed (and remembers).
pub fn printed_count() -> usize {
    PRINTED.with(|p| p.borrow().len())
}

/// The trace messages this thread printed after the first `start`, in
/// order; `None` when there were more than it remembers.
pub fn printed_since(start: usize) -> Option<Vec<String>> {
    PRINTED.with(|p| {
        let p = p.borrow();
        (p.len() < REMEMBERED).then(|| p.get(start..).unwrap_or_default().to_vec())
    })
}
