//! The one spine every operation that changes nodes runs on (`switch`,
//! `rollback`, `reset`): read the deployer's records once → the nodes to
//! reach (refusals that need no node come first) → connect (a target that
//! does not answer stops the run, unless the operation may go on without
//! it: [`Operation::without`]) → open every node reached (node program,
//! lock, status) → the operation's pure plan →
//! announce → a dry run's text, or (with the operator's consent to what
//! a rollback cannot undo) the executor → let go of the locks →
//! close the connections. An operation says only what differs: whom to
//! reach ([`Operation::targets`]), how to plan ([`Operation::plan`]) and,
//! for `switch`, where blob bytes come from ([`Operation::blobs`]).
//! Tests drive [`run_reached`] over `LocalHost` nodes they reached
//! themselves.

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::join_all;

use super::connect::{connect_reporting, lock_owner, SshSettings};
use super::consent::Consent;
use super::error::Error;
use super::events::Sink;
use super::execute::{self, Cancel, Context, Outcome, Reached, Session};
use super::plan::{self, Plan};
use super::record::Records;
use super::step::Deadlines;
use crate::store::cache::BinaryCache;
use crate::store::Resolver;
use crate::transport::NodeTarget;

/// What every operation is run with.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Plan and show, change nothing.
    pub dry_run: bool,
    /// At most this many nodes connected and pushed to at once (0: the default).
    pub parallel: usize,
    /// Of those, at most this many receive blobs over SSH at once (0: the default).
    pub uploads: usize,
    pub ssh: SshSettings,
    /// `.kdeploy` of the project (generation records).
    pub state_dir: PathBuf,
    pub deadlines: Deadlines,
    /// Whether a plan that resets, prunes, removes members or drains may
    /// go on (`consent.rs`); the default: given.
    pub consent: Consent,
}

impl RunOptions {
    /// Defaults, with the records in `state_dir`.
    pub fn at(state_dir: impl Into<PathBuf>) -> RunOptions {
        RunOptions { state_dir: state_dir.into(), ..Default::default() }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub outcome: Outcome,
    /// The deployer generation this run recorded, when it succeeded and
    /// recorded one.
    pub recorded: Option<u64>,
    /// A dry run's plan as text (empty otherwise).
    pub plan_text: String,
}

impl Report {
    fn of(outcome: Outcome) -> Report {
        Report { outcome, recorded: None, plan_text: String::new() }
    }
}

/// What one operation adds to the spine. (Its futures need not be
/// `Send`: a run is driven by `block_on`, never spawned, so the lint
/// about auto-trait bounds on `async fn` in traits does not apply.)
#[allow(async_fn_in_trait)]
pub trait Operation {
    /// Who holds the nodes' locks (shown to a run that finds them taken).
    const NAME: &'static str;

    /// The nodes to reach, and how. Refusals that need no node go here,
    /// so they come before anything is reached.
    fn targets(&self, records: &Records, ssh: &SshSettings, sink: &dyn Sink) -> Result<Vec<NodeTarget>, Error>;

    /// Whether the run may go on without the targets in `unreachable`
    /// (each reported as unreachable already), holding the others. The
    /// default: no, nothing changes ([`Outcome::Unreachable`]); only
    /// `switch --max-unreachable` says yes, and then plans with the
    /// skipped nodes in [`Session::skipped`]. An error refuses the run.
    fn without(&self, _unreachable: &[String], _records: &Records) -> Result<bool, Error> {
        Ok(false)
    }

    /// Of the targets in `unreachable`, those the run removes without
    /// reaching them (a `switch --prune` of a dead node); the run plans
    /// with them in [`Session::gone`], and they neither stop it nor make
    /// it partial. The default: none.
    fn gone(&self, _unreachable: &[String], _records: &Records) -> Vec<String> {
        Vec::new()
    }

    /// The plan, from the opened nodes. What an error means (a rule that
    /// refuses the run, or an answer that cannot be planned from) is its
    /// [`Error::stage`].
    async fn plan(&self, records: &Records, session: &Session<'_>, sink: &dyn Sink) -> Result<Plan, Error>;

    /// What a dry run prints.
    async fn dry_run_text(&self, plan: &Plan, _session: &Session<'_>) -> Result<String, Error> {
        Ok(plan::render(plan))
    }

    /// Where the bytes of the blobs the plan stages come from, and the
    /// binary cache the nodes fetch them from (`None`: it stages nothing).
    fn blobs(&self) -> (Option<&Resolver>, Option<Arc<BinaryCache>>) {
        (None, None)
    }
}

/// Run `op`: connect to its targets, then [`run_reached`]. Any target
/// not reached: nothing changes ([`Outcome::Unreachable`]), unless the
/// operation may go on without it ([`Operation::without`]).
pub async fn run<O: Operation>(op: &O, opts: &RunOptions, cancel: Cancel, sink: &dyn Sink) -> Result<Report, Error> {
    let records = Records::load(&opts.state_dir)?;
    run_with(op, opts, &records, cancel, sink).await
}

/// [`run`] with the deployer's records the caller read already (a CLI
/// that shows the rollback target first reads them once, not twice).
pub async fn run_with<O: Operation>(
    op: &O,
    opts: &RunOptions,
    records: &Records,
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<Report, Error> {
    let targets = op.targets(records, &opts.ssh, sink)?;
    let (hosts, unreachable) = connect_reporting(&targets, opts.parallel, sink).await;
    let reached: Vec<Reached<'_>> = hosts.iter().map(|h| Reached { host: h.as_ref(), prefix: "" }).collect();
    let done = run_connected(op, opts, records, &reached, &unreachable, cancel, sink).await;
    join_all(hosts.iter().map(|h| h.close())).await;
    done
}

/// Run `op` on nodes already reached (each must be one of its targets,
/// by its host's name). The connections stay open; closing them is the
/// caller's.
pub async fn run_reached<O: Operation>(
    op: &O,
    opts: &RunOptions,
    nodes: &[Reached<'_>],
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<Report, Error> {
    run_reached_without(op, opts, nodes, &[], cancel, sink).await
}

/// [`run_reached`] as after connecting, when the targets in
/// `unreachable` did not answer (tests stand for a node cut off this way).
pub async fn run_reached_without<O: Operation>(
    op: &O,
    opts: &RunOptions,
    nodes: &[Reached<'_>],
    unreachable: &[String],
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<Report, Error> {
    let records = Records::load(&opts.state_dir)?;
    run_connected(op, opts, &records, nodes, unreachable, cancel, sink).await
}

/// Once connected: stop when a target did not answer and the operation
/// may not go on without it (or none answered: there is nothing to go on
/// with); else open the nodes reached, plan, execute. A run that went on
/// without some target and ended well is [`Outcome::Partial`].
async fn run_connected<O: Operation>(
    op: &O,
    opts: &RunOptions,
    records: &Records,
    nodes: &[Reached<'_>],
    unreachable: &[String],
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<Report, Error> {
    let gone = op.gone(unreachable, records);
    let skipped: Vec<String> = unreachable.iter().filter(|n| !gone.contains(n)).cloned().collect();
    if !skipped.is_empty() && (nodes.is_empty() || !op.without(&skipped, records)?) {
        return Ok(Report::of(Outcome::Unreachable));
    }
    let work = async |session: &Session<'_>| plan_and_execute(op, opts, records, session, cancel, sink).await;
    let left = Left { skipped: &skipped, gone: &gone };
    let report = report(on_reached(O::NAME, nodes, left, sink, work).await)?;
    let partial = !skipped.is_empty() && report.outcome == Outcome::Ok;
    Ok(if partial { Report { outcome: Outcome::Partial, ..report } } else { report })
}

/// How far a run got towards holding its nodes.
pub enum Held<T> {
    /// Some target did not answer: nothing was opened.
    Unreachable,
    /// Some node could not be opened (locked, its program refused): the
    /// others were let go untouched.
    NotOpened,
    /// Every node held; what the work returned.
    Done(T),
}

fn report(held: Held<Result<Report, Error>>) -> Result<Report, Error> {
    match held {
        Held::Unreachable => Ok(Report::of(Outcome::Unreachable)),
        Held::NotOpened => Ok(Report::of(Outcome::Failed)),
        Held::Done(r) => r,
    }
}

/// The spine's bones for a command that holds every node it names or
/// none (`gc`): connect every target (all or none go on), open each
/// (node program, lock held by `name`, status), `work` while holding them
/// all, let go, close the connections.
pub async fn on_nodes<T>(
    name: &str,
    targets: &[NodeTarget],
    parallel: usize,
    sink: &dyn Sink,
    work: impl AsyncFnOnce(&Session<'_>) -> T,
) -> Held<T> {
    on_targets(name, targets, parallel, false, sink, work).await
}

/// [`on_nodes`] for a command that goes on with the targets that answer
/// (`snapshot`, `restore`: the members left): those that do not are
/// reported and in [`Session::skipped`].
pub async fn on_answering<T>(
    name: &str,
    targets: &[NodeTarget],
    parallel: usize,
    sink: &dyn Sink,
    work: impl AsyncFnOnce(&Session<'_>) -> T,
) -> Held<T> {
    on_targets(name, targets, parallel, true, sink, work).await
}

/// Connect the targets; unless some did not answer and `without` is
/// false, [`on_reached`] with the others; close the connections.
async fn on_targets<T>(
    name: &str,
    targets: &[NodeTarget],
    parallel: usize,
    without: bool,
    sink: &dyn Sink,
    work: impl AsyncFnOnce(&Session<'_>) -> T,
) -> Held<T> {
    let (hosts, unreachable) = connect_reporting(targets, parallel, sink).await;
    let held = if unreachable.is_empty() || without {
        let reached: Vec<Reached<'_>> = hosts.iter().map(|h| Reached { host: h.as_ref(), prefix: "" }).collect();
        on_reached(name, &reached, Left { skipped: &unreachable, gone: &[] }, sink, work).await
    } else {
        Held::Unreachable
    };
    join_all(hosts.iter().map(|h| h.close())).await;
    held
}

/// The targets a run goes on without: skipped ([`Session::skipped`]) and
/// removed without being reached ([`Session::gone`]).
#[derive(Clone, Copy, Default)]
pub struct Left<'a> {
    pub skipped: &'a [String],
    pub gone: &'a [String],
}

/// [`on_nodes`] on nodes already reached (their connections stay open),
/// going on without the targets `left` names.
pub async fn on_reached<T>(
    name: &str,
    nodes: &[Reached<'_>],
    left: Left<'_>,
    sink: &dyn Sink,
    work: impl AsyncFnOnce(&Session<'_>) -> T,
) -> Held<T> {
    let mut session = match execute::open(nodes, &lock_owner(name), sink).await {
        Ok(s) => s,
        Err(s) => {
            s.close().await;
            return Held::NotOpened;
        }
    };
    session.skipped = left.skipped.to_vec();
    session.gone = left.gone.to_vec();
    let done = work(&session).await;
    session.close().await;
    Held::Done(done)
}

async fn plan_and_execute<O: Operation>(
    op: &O,
    opts: &RunOptions,
    records: &Records,
    session: &Session<'_>,
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<Report, Error> {
    let plan = op.plan(records, session, sink).await?;
    execute::announce(&plan, sink);
    if opts.dry_run {
        let plan_text = op.dry_run_text(&plan, session).await?;
        return Ok(Report { plan_text, ..Report::of(Outcome::Ok) });
    }
    if let Some(refused) = opts.consent.refusal(&plan) {
        return Err(refused);
    }
    for s in &plan.snapshots {
        super::snapshot::before(session, s, &opts.state_dir, &opts.deadlines, sink).await?;
    }
    let (resolver, cache) = op.blobs();
    let cx = Context {
        resolver,
        cache,
        records,
        state_dir: &opts.state_dir,
        cancel,
        deadlines: opts.deadlines,
        parallel: opts.parallel,
        uploads: opts.uploads,
    };
    let outcome = execute::execute(session, &plan, &cx, sink).await?;
    let recorded = plan.record.as_ref().map(|g| g.number).filter(|_| outcome == Outcome::Ok);
    Ok(Report { recorded, ..Report::of(outcome) })
}
