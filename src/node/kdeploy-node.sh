# shellcheck shell=sh disable=SC2015,SC2012  # `A && B || die` is meant; ls of numeric names
# kdeploy node program: the only code kdeploy runs on a node (see
# src/node/README.md for the layout, the commands and the protocol). The
# shell language is POSIX sh (checked by shellcheck; run by the node's
# /bin/sh), but the tools it calls are not POSIX: it needs GNU coreutils, findutils, diffutils
# and tar, util-linux's flock and, for units, systemd -- `requires` below lists
# every tool and GNU feature, and the deployer runs it before installing.
# Installed as /var/lib/kdeploy/bin/node-<hash>.sh and run as
# `sh THAT --protocol N [--held TOKEN] CMD ARGS...`.
# KDEPLOY_PREFIX (tests only) puts everything, managed paths included, below
# a directory instead of /.
set -eu
umask 022

# The numbers the deployer shares (src/node/protocol/constants.rs defines
# them; a test there checks these lines): the protocol version, the lock's
# timings in seconds and the exit status of each refusal code.
PROTOCOL=3
SILENCE=30       # the holder lets go after this long without a heartbeat byte
CONTEND=12       # a contender watches the holder's heartbeat this long
TAKEOVER_WAIT=40 # then waits this long for a silent holder's lock
DRAIN_WAIT=40    # a new holder waits this long for the old holder's commands
BUSY_WAIT=60     # a holder's command waits this long for lock.busy
EX_FAILED=1 EX_UNIT_FAILED=3 EX_NOT_FOUND=66 EX_UNSUPPORTED=69
EX_LOCKED=75 EX_VERSION=76 EX_LOCK_LOST=77
# `run` gives the command it runs the caller's locale back
CALLER_LC_ALL=${LC_ALL-} CALLER_HAS_LC_ALL=${LC_ALL+1}
# bytes, not characters: the same answers everywhere, and sed, grep and sort
# start faster (they run on every node on every run)
export LC_ALL=C
P=${KDEPLOY_PREFIX:-}
R=$P/var/lib/kdeploy
# (tests against a directory only: a takeover that gives up sooner)
drain_wait=$DRAIN_WAIT
[ -z "$P" ] || drain_wait=${KDEPLOY_TEST_DRAIN_WAIT:-$DRAIN_WAIT}
# put hashes and syncs a blob from this size up (bytes sent) in the
# background as soon as it is written
EARLY_CHECK_FROM=1048576
TAB='	'  # a literal tab (no subshell: every fork costs on a round trip)

NL='
'

# refuse_line CODE DETAIL...: the one shape of a refusal, one line on
# stderr (`kdeploy-node-error CODE DETAIL`, control characters in DETAIL
# made spaces) that the deployer reads by its code (protocol/refusal.rs).
refuse_line() {
    c=$1
    shift
    case $* in
    *$CTRL*) printf 'kdeploy-node-error %s %s\n' "$c" "$(printf '%s' "$*" | tr '\001-\037\177' ' ')" >&2 ;;
    *) printf 'kdeploy-node-error %s %s\n' "$c" "$*" >&2 ;;
    esac
}
# fail CODE DETAIL...: refuse, with the code's exit status.
fail() {
    refuse_line "$@"
    case $1 in
    failed) exit "$EX_FAILED" ;;
    unit-failed) exit "$EX_UNIT_FAILED" ;;
    not-found) exit "$EX_NOT_FOUND" ;;
    unsupported) exit "$EX_UNSUPPORTED" ;;
    locked | busy) exit "$EX_LOCKED" ;;
    version) exit "$EX_VERSION" ;;
    lock-lost) exit "$EX_LOCK_LOST" ;;
    esac
    exit "$EX_FAILED"
}
die() { fail failed "$@"; }

# Paths to remove when the program exits, however it ends (but SIGKILL:
# gc sweeps the .tmp directories): one EXIT trap for the whole program, set
# once, and a list each command adds what it makes to (on_exit_remove) and
# takes back what it has put in place (keep). No trap is re-armed.
CLEANUP=''
on_exit_remove() { CLEANUP=$CLEANUP$1$NL; }
# (their variables are prefixed: sh has no locals, and keep runs inside
# the commands' loops)
keep() {
    cl_rest=$CLEANUP CLEANUP=''
    while [ -n "$cl_rest" ]; do
        cl_p=${cl_rest%%"$NL"*} cl_rest=${cl_rest#*"$NL"}
        [ "$cl_p" = "$1" ] || CLEANUP=$CLEANUP$cl_p$NL
    done
}
cleanup() {
    cl_rest=$CLEANUP
    while [ -n "$cl_rest" ]; do
        cl_p=${cl_rest%%"$NL"*} cl_rest=${cl_rest#*"$NL"}
        rm -rf -- "$cl_p" 2>/dev/null || true
    done
}
trap cleanup EXIT
is_token() { case $1 in *[!0-9a-f]* | '') return 1 ;; esac; [ ${#1} -eq 32 ]; }
is_hash() { case $1 in *[!0-9a-f]* | '') return 1 ;; esac; [ ${#1} -eq 64 ]; }
is_gen() { case $1 in *[!0-9]* | '') return 1 ;; esac; }
is_name() { case $1 in *[!A-Za-z0-9._@-]* | '' | .* | -*) return 1 ;; esac; }
# Absolute, normalised, printable, and not where the node's own state or
# the kernel's views live (the deployer refuses these too; a node trusts
# no one). (Control characters, by class: LC_ALL=C makes them bytes 1-31
# and 127; a class, not a printf, costs no fork at every start.)
CTRL='[[:cntrl:]]'
is_path() {
    case $1 in
    /*/../* | */.. | /*/./* | */. | *//* | */) return 1 ;; # (`*/` includes `/`)
    /var/lib/kdeploy | /var/lib/kdeploy/* | /proc | /proc/* | /sys | /sys/* | /dev | /dev/*) return 1 ;;
    *$CTRL*) return 1 ;;
    /*) return 0 ;;
    *) return 1 ;;
    esac
}
is_mode() { case $1 in [0-7][0-7][0-7] | [0-7][0-7][0-7][0-7]) return 0 ;; *) return 1 ;; esac; }
# A user or group: a name as useradd takes it, or a numeric id.
is_owner() { case $1 in *[!A-Za-z0-9._-]* | '' | -*) return 1 ;; esac; }
# What a staged file's stat line records (file_stats, stage_stats, verify_stats
# compare them): size, mtime, mode, owner, group and the inode's change time
# to the nanosecond -- which any write, chmod or chown sets to now and no
# user can set back (`touch -d` restores an mtime, never a ctime), so an
# edit that keeps size and mtime, or comes within the second of staging,
# still shows. Lines recorded before the ctime was (5 fields) are compared
# on those 5 (stat_changed).
STAT_FMT='%s %Y %a %U %G %.9Z'
# Size, mtime, mode and owner of each file of manifest $2 below directory $1
# (a generation's files/), one `path TAB stat` line each, sorted: recorded
# at stage, compared by `verify`.
# One stat for all the files (verify runs on every node on every run, and
# each fork costs); a missing file makes stat fail, and then each file is
# looked at alone so the missing one is named.
file_stats() {
    paths=$(file_paths "$2" | sort)
    [ -n "$paths" ] || return 0
    if out=$(cd "$1" 2>/dev/null && printf '%s\n' "$paths" | sed 's|^/||' |
        xargs -d '\n' stat -c "/%n$TAB$STAT_FMT" -- 2>/dev/null); then
        printf '%s\n' "$out"
        return 0
    fi
    printf '%s\n' "$paths" | while IFS= read -r path; do
        printf '%s\t%s\n' "$path" "$(stat -c "$STAT_FMT" "$1$path" 2>/dev/null || echo missing)"
    done
}
# stat_changed RECORDED NOW: the keys (a line up to its last tab) whose
# stat (after it) differs between the two lists (files; `-`: stdin), or
# that one of them lacks, sorted. A stat recorded without the ctime (an
# older program's 5 fields) is compared with the first 5 fields of the new.
stat_changed() {
    { sed "s/^/R$TAB/" "$1" && sed "s/^/N$TAB/" "$2"; } | awk -F"$TAB" '
        { k = substr($0, 3, length($0) - length($NF) - 3) }
        $1 == "R" { rec[k] = $NF; next }
        {
            seen[k] = 1
            if (!(k in rec)) { print k; next }
            s = $NF
            if (split(rec[k], r, " ") == 5 && split(s, n, " ") == 6) s = n[1] " " n[2] " " n[3] " " n[4] " " n[5]
            if (s != rec[k]) print k
        }
        END { for (k in rec) if (!(k in seen)) print k }' | LC_ALL=C sort -u
}
UID_=''
is_root() {
    [ -n "$UID_" ] || UID_=$(id -u)
    [ "$UID_" = 0 ]
}

# The state directory is traversable (0711: managed paths are symlinks
# into phases/ that unprivileged readers of e.g. /etc/hosts must resolve)
# but not listable; everything that may hold bytes nobody else should read
# -- blobs, secrets, materialised objects, displaced originals -- is 0700.
harden() {
    # (one stat when all is as it should be: every run locks every node)
    [ "$(stat -c %a "$R" "$R/store" "$R/objects" "$R/secrets" "$R/displaced" 2>/dev/null)" != \
        "711
700
700
700
700" ] || return 0
    mkdir -p "$R/store" "$R/objects" "$R/secrets" "$R/displaced"
    chmod 0711 "$R"
    chmod 0700 "$R/store" "$R/objects" "$R/secrets" "$R/displaced"
}

# Lines of kind $2 ("f" or "d") of manifest $1, tab-separated, for `read`.
entries() { [ -n "$1" ] && [ -f "$1" ] && grep "^$2$TAB" "$1" || true; }
# Paths of the files of manifest $1 (may be empty), one per line.
file_paths() { entries "$1" f | cut -f6; }

# lock OWNER TOKEN [--status [--verify]]: hold the node lock for as long
# as the deployer's heartbeat (a byte every 5 s on stdin) goes on: SILENCE
# seconds of silence or end of input lets go.
# A run that finds the lock taken watches lock.owner for CONTEND seconds:
# touched (the holder is alive) -> refused, `locked`; never touched -> the
# holder is gone (killed or cut off) and its shell lets go within SILENCE:
# wait for it (TAKEOVER_WAIT).
# TOKEN (the deployer's random id for this lock) goes to lock.token with
# this shell's pid: every command that changes the node is given it
# (`--held TOKEN`) and refused, `lock-lost`, once the lock is not held with it
# any more -- a deployer that was paused past SILENCE and resumed must not
# interleave with the run that took over. Commands of such a run still
# running hold lock.busy shared: the new holder waits for them first.
cmd_lock() {
    [ $# -ge 2 ] && is_token "$2" || die "usage: lock OWNER TOKEN [--status [--verify]]"
    # OWNER is one line of lock.owner, and the detail of refusals
    case $1 in '' | *$CTRL*) die "lock: bad owner" ;; esac
    harden
    exec 9>>"$R/lock"
    if ! flock -n 9; then
        before=$(stat -c %Y "$R/lock.owner" 2>/dev/null || echo 0)
        waited=0
        while [ "$waited" -lt "$CONTEND" ]; do
            sleep 1
            waited=$((waited + 1))
            now=$(stat -c %Y "$R/lock.owner" 2>/dev/null || echo 0)
            if [ "$now" != "$before" ] || flock -n 9; then break; fi
        done
        if ! flock -n 9; then
            if [ "$now" != "$before" ] || ! flock -w "$TAKEOVER_WAIT" 9; then
                fail locked "$(cat "$R/lock.owner" 2>/dev/null || echo unknown)"
            fi
            printf 'kdeploy-node: took over the lock of a run that stopped answering (%s)\n' \
                "$(cat "$R/lock.owner" 2>/dev/null || echo unknown)" >&2
        fi
    fi
    printf '%s pid=%s since=%s\n' "$1" $$ "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$R/lock.owner"
    # From here on a command of an earlier holder is refused (token)...
    write_token "$2" $$
    # ... and one it started before is waited for (it holds lock.busy).
    exec 8>>"$R/lock.busy"
    if ! flock -w "$drain_wait" 8; then
        write_token released -
        exec 8>&-
        # a command of the run that held the lock before (a hook or unit
        # operation it started before it stopped answering) still runs
        fail busy "$(busy_holders)"
    fi
    exec 8>&-
    # A phase armed by a run that stopped answering is this run's to judge
    # now (status says `pending`): its watchdog, waiting for this lock,
    # finds it disarmed and leaves the node to this run (cmd_arm).
    [ ! -e "$R/armed" ] || rm -f "$R/armed"
    # --status [--verify]: what `status` prints, read under the lock,
    # before the `locked` line (one round trip for lock and status)
    case ${3:-} in --status) cmd_status ;; esac
    # (under the lock, verify keeps what its quick way needs)
    case ${4:-} in --verify) cmd_verify keep ;; esac
    echo locked
    # The lock is the open fd 9 of this shell; the commands below do not
    # inherit it, so killing this shell releases the lock too.
    while b=$(timeout "$SILENCE" head -c 1 9>&-) && [ -n "$b" ]; do
        # -c: after `forget` the holder keeps beating until released, and a
        # lock.owner made again would leave forget's rm a directory not empty
        touch -c "$R/lock.owner" 9>&- 2>/dev/null || true
    done
    [ ! -f "$R/lock.token" ] || write_token released -
}

# busy_holders: the processes holding lock.busy open, `PID COMMAND LINE`
# separated by `; ` (three at most, each cut at 160 characters): which
# command of an earlier run a new holder gave up waiting for.
busy_holders() {
    find /proc/[0-9]*/fd -maxdepth 1 -lname "$R/lock.busy" 2>/dev/null | cut -d/ -f3 | sort -un | head -n 3 |
        while read -r p; do
            printf '%s %s; ' "$p" "$(tr '\000' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-160)"
        done
}

# write_token TOKEN PID: lock.token's one line, of one width, written over
# the old one in place: taking the lock then allocates nothing, and works
# on a full disk as it did before there were tokens. "released -" is no
# holder's token.
write_token() {
    if [ -f "$R/lock.token" ]; then
        printf '%32s %10s\n' "$1" "$2" 1<>"$R/lock.token"
    else
        printf '%32s %10s\n' "$1" "$2" >"$R/lock.token"
    fi
}

# held: what a command that changes the node does first. Refused (lock-lost)
# unless it was given (`--held TOKEN`) the token of the lock's live holder;
# then it holds lock.busy shared until it exits, so a run that takes the
# lock over waits for it. Costs one flock.
held() {
    [ -n "$TOKEN" ] || die "$cmd: only the holder of the node lock may run this (--held TOKEN)"
    [ -d "$R" ] || lock_lost
    exec 8>>"$R/lock.busy"
    flock -s -w "$BUSY_WAIT" 8 || lock_lost
    # the holder's token, and its shell alive (killed, it left its token)
    ht='' hp=''
    if [ -f "$R/lock.token" ]; then read -r ht hp <"$R/lock.token" || true; fi
    [ "$ht" = "$TOKEN" ] && [ -n "$hp" ] && kill -0 "$hp" 2>/dev/null || lock_lost
}

# the detail is the holder's lock.owner line
lock_lost() { fail lock-lost "$(cat "$R/lock.owner" 2>/dev/null || echo nobody)"; }

# run CMD ARG...: CMD under the lock (see `held`), with the caller's
# locale, its status passed on. It does not inherit lock.busy (a daemon it
# leaves behind must not hold a takeover up).
cmd_run() {
    [ $# -ge 1 ] || die "usage: run CMD ARG..."
    if [ -n "$CALLER_HAS_LC_ALL" ]; then LC_ALL=$CALLER_LC_ALL; else unset LC_ALL; fi
    st=0
    "$@" 8>&- || st=$?
    exit "$st"
}

# The sha256 of received bytes is worked out by openssl where the node has
# it (with SHA-NI, about four times coreutils' speed: on a first converge
# hashing was the largest part of a node's time), else by coreutils'
# sha256sum. A wrong "match" cannot come of it; a wrong mismatch is judged
# again by sha256sum (put_mismatch) before anything is refused.
SHA_TOOL=''
sha_tool() {
    [ -n "$SHA_TOOL" ] && return 0
    if command -v openssl >/dev/null 2>&1; then SHA_TOOL=openssl; else SHA_TOOL=sha256sum; fi
}

# sha256_of FILE: its sha256 in $got (64 hex digits).
sha256_of() {
    sha_tool
    if [ "$SHA_TOOL" = openssl ]; then got=$(openssl dgst -sha256 -r <"$1"); else got=$(sha256sum <"$1"); fi
    got=${got%% *}
}

# have: one `HASH [SIZE [SHA256]]` line per blob the deployer needs;
# prints the hashes the node lacks. A blob that is there but whose size
# differs (or, when SHA256 is given, whose sha256 does) -- truncated by a
# crash or a full disk, altered by hand -- is removed and counts as
# missing, so it is sent again: existing is not enough to be trusted.
# Secrets (in secrets/) are checked by size only and, re-sent, get their
# 0600 back from `put-secrets`.
cmd_have() {
    while read -r h size sha; do
        [ -n "$h" ] || continue
        is_hash "$h" || die "have: bad hash '$h'"
        b=$R/store/$h
        [ -f "$b" ] || b=$R/secrets/$h
        if [ ! -f "$b" ]; then
            echo "$h"
            continue
        fi
        [ -n "$size" ] || continue
        is_gen "$size" || die "have: bad size '$size' for $h"
        [ -z "$sha" ] || is_hash "$sha" || die "have: bad sha256 '$sha' for $h"
        ok=1
        [ "$(stat -c %s "$b")" = "$size" ] || ok=''
        if [ -n "$ok" ] && [ -n "$sha" ] && [ "$b" = "$R/store/$h" ]; then
            sha256_of "$b"
            [ "$got" = "$sha" ] || ok=''
        fi
        if [ -z "$ok" ]; then
            rm -f "$b"
            echo "$h"
        fi
    done
}

# refuse MESSAGE: put fails, after reading the rest of its input: the
# deployer's stream then ends as sent, never against a reader gone away.
refuse() {
    cat >/dev/null
    die "$@"
}

# put <BLOBS: a stream of blobs into the store, each a line `BLAKE3 SHA256
# SIZE ENCODING` then its body: SIZE bytes (raw), or (frames: compressed in
# transit) zstd frames of its chunks in pieces, each piece after a line
# with its length, then a line `0`; SIZE is then the blob's size. SHA256 `-`: the sha256
# follows the body, on a line of its own (the deployer hashed the blob
# while its bytes went). Small blobs may come together as a pack (a line
# `pack COUNT SIZE tar`: put_pack). Each
# is written out whole, then hashed from the page cache (cheaper than a tee
# through pipes on a busy node) and refused unless its sha256 matches; all
# are synced, then renamed into the store, so a crash leaves none
# half-written. A large blob is hashed and synced in the background as
# soon as it is written, while the next ones arrive (the bytes of a
# binary take longer than the process); the small ones together at the
# end.
# One command for every blob a node lacks: a round trip and a shell per
# blob would cost more than the bytes of most of them.
cmd_put() {
    [ $# -eq 0 ] || die "usage: put <BLOB-STREAM"
    [ -d "$R/store" ] || harden
    lower_priority
    # Per blob one process (dd; with zstd after it), then one sha256
    # process for the whole stream: a process per blob per check was most
    # of the time of a stream of small files. Everything in flight is in
    # one directory of this put's, removed when it ends.
    dir=$R/store/.tmp/put.$$
    mkdir -p "$dir"
    on_exit_remove "$dir"
    names='' sums=$dir/sha256 want='' small='' early='' packs=0
    : >"$sums"
    sha_tool
    while IFS=' ' read -r b sha size enc; do
        if [ "$b" = pack ]; then
            put_pack "$sha" "$size" "$enc"
            continue
        fi
        is_hash "$b" && { [ "$sha" = - ] || is_hash "$sha"; } || refuse "put: bad blob header: $b $sha"
        case $size in '' | *[!0-9]*) refuse "put: bad size for blob $b: $size" ;; esac
        case $enc in raw | frames) ;; *) refuse "put: blob $b: unknown encoding '$enc'" ;; esac
        if [ -f "$R/store/$b" ] || [ -f "$dir/$b" ]; then
            if [ "$enc" = raw ]; then take "$size" >/dev/null; else take_frames >/dev/null || refuse "put: blob $b: bad frames"; fi
            sha_after "$b"
            continue
        fi
        t=$dir/$b
        names="$names $b"
        case $enc in
        raw) take "$size" >"$t" || refuse "put: blob $b: cannot write it" ;;
        # a short or damaged body fails zstd; its bytes are checked below
        frames)
            # (a pipeline's status is its last command's: take_frames says
            # a malformed body with a file)
            { take_frames || : >"$t.bad"; } | zstd -dqc >"$t" || refuse "put: blob $b: cannot decompress it"
            [ ! -e "$t.bad" ] || refuse "put: blob $b: bad frames"
            ;;
        esac
        sha_after "$b"
        printf '%s  %s\n' "$sha" "$t" >>"$sums"
        if [ "$size" -ge "$EARLY_CHECK_FROM" ]; then
            check_early "$t" "$sha" &
            early="$early $!"
        else
            small="$small $b"
            want="$want$sha *$b$NL"
        fi
    done
    [ -n "$names" ] || return 0
    # (pids this function started, split on the spaces between them)
    for pid in $early; do wait "$pid" || put_mismatch "$sums"; done
    [ -z "$small" ] || sums_hold "$dir" "$small" "$want" "$sums" || put_mismatch "$sums"
    # (blob names this function took from headers it checked, split on the
    # spaces between them; each rename into the store is atomic)
    # shellcheck disable=SC2086
    (cd "$dir" && chmod 0444 $names && sync_all $names && mv -f -t "$R/store" -- $names)
}

# sync_all FILE...: FILE... (in the current directory) on disk: each
# flushed on its own when they are few, else their whole file system at
# once (syncfs) -- an fsync each costs a journal commit each on ext4,
# ~4 ms: 2.4 s for 625 small blobs, against 12 ms for one syncfs.
sync_all() {
    if [ $# -le 16 ]; then sync -- "$@"; else sync -f .; fi
}

# put_pack COUNT SIZE ENCODING: the small blobs of a pack (put's reader:
# adds them to put's lists as small blobs): a tar archive of SIZE bytes,
# unpacked by one tar into a directory of its own (a process per blob was
# most of the time of a stream of small files), then COUNT lines `BLAKE3
# SHA256`, one a member. The archive must hold those members, each a
# regular file named by its blake3, and nothing else; their sha256s are
# checked with the other small blobs. A member the node holds already is
# dropped (left in the pack's directory, removed with the put's).
put_pack() {
    # (no leading zero: sh's arithmetic would read it as octal)
    case $1 in '' | *[!0-9]* | 0*) refuse "put: bad pack count: $1" ;; esac
    case $2 in '' | *[!0-9]*) refuse "put: bad pack size: $2" ;; esac
    [ "$3" = tar ] || refuse "put: pack: unknown encoding '$3'"
    [ "${#1}" -le 4 ] || refuse "put: pack of $1 blobs"
    packs=$((packs + 1))
    pk=$dir/pack.$packs
    mkdir "$pk" || refuse "put: pack: cannot make $pk"
    # (a stream that ends inside the archive lacks the member lines after it)
    take "$2" | tar -x -f - -C "$pk" -m --no-same-owner --no-same-permissions 2>/dev/null ||
        refuse "put: pack: cannot unpack it"
    # nothing in the archive but its members (counted without a process)
    pk_n=0
    for f in "$pk"/* "$pk"/.[!.]* "$pk"/..?*; do
        [ -e "$f" ] || [ -h "$f" ] || continue
        pk_n=$((pk_n + 1))
    done
    [ "$pk_n" -eq "$1" ] || refuse "put: pack: $pk_n file(s) in it for $1 member(s)"
    pk_left=$1 pk_move=''
    while [ "$pk_left" -gt 0 ]; do
        IFS=' ' read -r b sha || refuse "put: pack: $pk_left member line(s) missing"
        is_hash "$b" && is_hash "$sha" || refuse "put: pack: bad member line: $b $sha"
        [ -f "$pk/$b" ] && [ ! -h "$pk/$b" ] || refuse "put: pack: blob $b not in it"
        pk_left=$((pk_left - 1))
        # (a mark a member, made by a redirection: no process)
        [ ! -e "$pk/.seen.$b" ] || refuse "put: pack: blob $b twice"
        : >"$pk/.seen.$b"
        [ ! -f "$R/store/$b" ] && [ ! -f "$dir/$b" ] || continue
        pk_move="$pk_move $b"
        names="$names $b"
        printf '%s  %s\n' "$sha" "$dir/$b" >>"$sums"
        small="$small $b"
        want="$want$sha *$b$NL"
    done
    # (blob names checked above, split on the spaces between them)
    # shellcheck disable=SC2086
    [ -z "$pk_move" ] || (cd "$pk" && mv -f -t "$dir" -- $pk_move) || refuse "put: pack: cannot take its blobs"
}

# sha_after BLOB: read the sha256 that follows BLOB's body into sha, if
# its header said `-` (put's reader: sets put's variable).
sha_after() {
    [ "$sha" = - ] || return 0
    IFS= read -r sha && is_hash "$sha" || refuse "put: blob $1: no sha256 after its body"
}

# lower_priority: this process and what it starts go below the node's own
# services, for the CPU (10 nicer than it was) and the disk (last of the
# best-effort class): a transfer fills both, and a running etcd or API
# server (heartbeats, fsyncs) must come first. Where renice or ionice is
# missing, at full speed.
lower_priority() {
    read -r stat </proc/$$/stat || return 0
    # (the fields after the command's name, which is in parentheses;
    # the 17th of them is the niceness)
    # shellcheck disable=SC2086
    set -- ${stat##*) }
    [ $# -ge 17 ] || return 0
    shift 16
    renice -n $(($1 + 10)) -p $$ >/dev/null 2>&1 || :
    ionice -c 2 -n 7 -p $$ >/dev/null 2>&1 || :
}

# take SIZE: copy the next SIZE bytes of stdin to stdout, read in large
# blocks (head -c reads 8 KiB at a time: four times the system calls, and
# the pipe from sshd drained slower).
take() {
    dd bs=1M count="$1" iflag=count_bytes,fullblock status=none
}

# take_frames: copy the frames of a `frames` body to stdout, up to and
# without its closing `0` line; fails on a length line that is not digits.
take_frames() {
    while IFS= read -r n; do
        case $n in '' | *[!0-9]*) return 1 ;; 0) return 0 ;; esac
        take "$n" || return 1
    done
    return 1
}

# check_early FILE SHA256: FILE (a large blob just written) has SHA256,
# and is on disk; run in the background by put.
check_early() {
    sha256_of "$1"
    [ "$got" = "$2" ] && sync "$1"
}

# sums_hold DIR NAMES WANT SUMS: the files NAMES of DIR have the sha256s
# the deployer announced, in one process: openssl's `HASH *NAME` lines
# against WANT, or coreutils' check of SUMS (`HASH  PATH` lines).
sums_hold() {
    sha_tool
    if [ "$SHA_TOOL" = openssl ]; then
        # (NAMES: HASH.N names made by put, split on the spaces between them)
        # shellcheck disable=SC2086
        [ "$(cd "$1" && openssl dgst -sha256 -r $2)$NL" = "$3" ]
    else
        sha256sum --quiet --check "$4" >/dev/null 2>&1
    fi
}

# put_mismatch SUMS: name the first blob of a put whose bytes are not what
# the deployer announced, and fail.
put_mismatch() {
    while read -r sha t; do
        got=$(sha256sum <"$t")
        b=${t##*/}
        [ "${got%% *}" = "$sha" ] ||
            refuse "blob ${b%%.*} rejected: sha256 of the received bytes is ${got%% *}, expected $sha"
    done <"$1"
    refuse "put: sha256sum could not check the received blobs"
}

# admit TMP BLAKE3 SHA256: TMP (in store/.tmp) becomes blob BLAKE3 if its
# sha256 is SHA256; else it is removed and admit fails, saying why.
admit() {
    sha256_of "$1"
    if [ "$got" != "$3" ]; then
        rm -f "$1"
        printf 'kdeploy-node: blob %s rejected: sha256 of the received bytes is %s, expected %s\n' "$2" "$got" "$3" >&2
        return 1
    fi
    chmod 0444 "$1"
    sync "$1"
    mv -f "$1" "$R/store/$2"
}

# fetch BASE-URL <`BLAKE3 SHA256 SIZE` lines: each blob the store lacks is
# fetched from the binary cache at BASE-URL/BLAKE3 (curl, else wget; never
# through a proxy), at most SIZE bytes of it — curl's --max-filesize for a
# server that announces a larger length, and a file size limit (ulimit -f)
# on the downloader for one that announces none — and admitted only if its
# sha256 matches. Prints `HASH rejected` for each blob the cache holds
# wrong (other bytes, or more of them: the deployer puts it there again)
# and `HASH unavailable` for each it could not get, which the deployer
# then sends itself; why on stderr. A URL with credentials is refused:
# they would sit in the downloader's arguments, readable by any user.
cmd_fetch() {
    [ $# -eq 1 ] || die "usage: fetch BASE-URL <HASH SHA256 SIZE lines"
    case $1 in http://* | https://*) ;; *) die "fetch: not an http(s) URL: $1" ;; esac
    case $1 in *[!]A-Za-z0-9:/._~%+@[-]*) die "fetch: unexpected characters in URL: $1" ;; esac
    authority=${1#*://}
    case ${authority%%/*} in *@*) die "fetch: credentials in the cache URL are refused" ;; esac
    get=''
    if command -v curl >/dev/null 2>&1; then
        get=curl
    elif command -v wget >/dev/null 2>&1; then
        get=wget
    else
        printf 'kdeploy-node: fetch: neither curl nor wget on this node\n' >&2
    fi
    [ -d "$R/store" ] || harden
    dir=$R/store/.tmp/fetch.$$
    mkdir -p "$dir"
    on_exit_remove "$dir"
    while read -r h sha size; do
        [ -n "$h" ] || continue
        is_hash "$h" && is_hash "$sha" && is_gen "$size" || die "fetch: bad line '$h $sha $size'"
        [ ! -f "$R/store/$h" ] || continue
        if [ -z "$get" ]; then
            echo "$h unavailable"
            continue
        fi
        t=$dir/$h
        : >"$t"
        rc=0
        code=$(download "$get" "$1/$h" "$t" "$size" 2>"$t.err") || rc=$?
        got=$(wc -c <"$t")
        case $code in '' | 2??) ;; *)
            # (a server's error page may itself exceed the size: the status says what happened)
            printf 'kdeploy-node: blob %s not in the cache: HTTP %s\n' "$h" "$code" >&2
            echo "$h unavailable"
            rm -f "$t" "$t.err"
            continue
            ;;
        esac
        if [ "$rc" -eq 63 ] || [ "$rc" -gt 128 ] || [ "$got" -gt "$size" ]; then
            printf 'kdeploy-node: blob %s rejected: the cache serves it larger than %s bytes\n' "$h" "$size" >&2
            echo "$h rejected"
        elif [ "$rc" -ne 0 ]; then
            cat "$t.err" >&2
            echo "$h unavailable"
        elif ! admit "$t" "$h" "$sha"; then
            echo "$h rejected"
        fi
        rm -f "$t" "$t.err"
    done
}

# download GET URL FILE SIZE: URL into FILE with curl or wget, at most SIZE
# bytes: curl stops at a larger announced length (--max-filesize), and the
# downloader runs under a file size limit of that many 512-byte blocks
# (POSIX's unit; rounded up, plus one), so it is stopped (SIGXFSZ)
# whatever the server announces. Prints the HTTP status (curl only).
download() {
    (
        ulimit -f $(($4 / 512 + 2)) || exit "$EX_FAILED"
        if [ "$1" = curl ]; then
            exec curl -fsS --noproxy '*' --connect-timeout 10 --speed-time 30 --speed-limit 1 \
                --retry 2 --max-filesize "$4" -w '%{http_code}' -o "$3" "$2" </dev/null
        else
            exec wget -q --no-proxy -T 30 -t 3 -O "$3" "$2" </dev/null
        fi
    )
}

# put-secrets <SECRETS: per secret a `KEYED-HASH LENGTH` line, then LENGTH
# bytes; an `end` line after the last. Each goes to secrets/ (0700),
# created 0600 (umask 077) so it is never readable by anyone else, even
# half-written. Checked by length: no hash of a secret is ever computed
# here. One command for all of a node's secrets (a control plane has
# dozens): a round trip and a shell each cost more than their bytes.
cmd_put_secrets() {
    [ $# -eq 0 ] || die "usage: put-secrets <SECRETS"
    harden
    umask 077
    mkdir -p "$R/secrets/.tmp"
    dir=$(mktemp -d "$R/secrets/.tmp/put.XXXXXX")
    on_exit_remove "$dir"
    # bounded: a deployer paused mid-stream must not hold lock.busy for
    # ever (the reader then sees the stream end early, and refuses)
    timeout "$SILENCE" cat | secrets_from_stream "$dir"
}

# secrets_from_stream DIR: put-secrets' reader (a pipeline's subshell: its
# refusal is the command's). Each secret into DIR; once the stream has
# ended as it should, all are checked by length, made durable, and moved
# into secrets/.
secrets_from_stream() {
    names='' want='' ended=''
    while IFS=' ' read -r k len; do
        if [ "$k" = end ] && [ -z "$len" ]; then ended=1 && break; fi
        is_hash "$k" && is_gen "$len" || die "put-secrets: bad secret header: $k $len"
        if [ -f "$R/secrets/$k" ] || [ -f "$1/$k" ]; then
            head -c "$len" >/dev/null
            continue
        fi
        head -c "$len" >"$1/$k"
        names="$names $k" want="$want$len $k$NL"
    done
    [ -n "$ended" ] || die "put-secrets: the secrets did not all arrive within $SILENCE s"
    [ -n "$names" ] || return 0
    # (names this function made: keyed hashes, split on the spaces between them)
    # shellcheck disable=SC2086
    got=$(cd "$1" && stat -c '%s %n' -- $names)
    [ "$got$NL" = "$want" ] || die "put-secrets: a secret's bytes did not all arrive within $SILENCE s"
    # shellcheck disable=SC2086
    (cd "$1" && sync $names)
    for k in $names; do mv -f "$1/$k" "$R/secrets/$k"; done
}

# stage GEN PHASE...: stdin holds one manifest per PHASE, in that order, each
# from its `kdeploy-manifest 1` line. One command stages all the phases a
# node gets in a run, and all of them in one pass -- a directory pass, one
# copy per file, a chmod per mode, one stat and one sync for every phase
# together: a first converge stages nine phases per node, and per-phase
# processes were most of its staging time.
cmd_stage() {
    [ $# -ge 2 ] && is_gen "$1" || die "usage: stage GEN PHASE... <MANIFESTS"
    gen=$1
    shift
    for p in "$@"; do is_name "$p" || die "usage: stage GEN PHASE... <MANIFESTS"; done
    G=$R/generations/$gen
    mkdir -p "$G"
    t=$(mktemp -d "$G/.manifests.XXXXXX")
    on_exit_remove "$t"
    awk -v t="$t" '$0 == "kdeploy-manifest 1" { n++ } { print > (t "/" n) }'
    [ ! -e "$t/0" ] || die "stage: not a kdeploy manifest"
    [ -e "$t/$#" ] && [ ! -e "$t/$(($# + 1))" ] || die "stage: $# phase(s) named, another count of manifests given"
    # `I:PHASE` of each phase not staged already (one staged already must
    # have been staged with the same manifest)
    todo='' i=0
    for p in "$@"; do
        i=$((i + 1))
        if [ -f "$G/$p/.complete" ]; then
            cmp -s "$t/$i" "$G/$p/manifest" || die "generation $gen phase $p is already staged with another manifest"
        else
            todo="$todo $i:$p"
        fi
    done
    [ -n "$todo" ] || return 0
    stage_lists "$t" "$G" "$todo" || true
    # the phases before the first that failed its checks are staged; then
    # that one is refused, having left nothing
    [ -z "$failed_at" ] || todo=$(printf '%s\n' $todo | awk -F: -v k="$failed_at" '$1 < k' | tr '\n' ' ')
    [ -z "$todo" ] || stage_files "$t" "$G" "$todo"
    [ -z "$failed_at" ] || die "$why"
}

# stage_lists TMP G TODO: check every file and directory line of the
# manifests TMP/I of TODO (`I:PHASE` words), and find each file's blob;
# TMP/I.list gets `mode TAB owner:group TAB blob TAB destination` per file
# of phase I. At the first bad line or missing blob: $failed_at is its
# phase's I, $why says what, and 1.
stage_lists() {
    failed_at='' why='' cur='' sl_t=$1 sl_g=$2 sl_todo=$3
    set --
    for w in $sl_todo; do set -- "$@" "$sl_t/${w%%:*}"; done
    # (grep's -H puts FILE: before each line)
    grep -H "^[fd]$TAB" "$@" >"$sl_t/lines" || true
    for w in $sl_todo; do : >"$sl_t/${w%%:*}.list"; done
    while IFS= read -r l; do
        r=${l#"$sl_t"/}
        i=${r%%:*} l=${r#*:}
        if [ "$i" != "$cur" ]; then
            cur=$i ph=${sl_todo#* "$i":}
            ph=${ph%% *}
        fi
        IFS=$TAB read -r k mode owner group h path <<EOL
$l
EOL
        case $k in
        f)
            if ! { is_hash "$h" && is_path "$path" && is_mode "$mode" && is_owner "$owner" && is_owner "$group"; }; then
                failed_at=$i why="stage $ph: bad file line for '$path'"
                return 1
            fi
            blob=$R/store/$h
            [ -f "$blob" ] || blob=$R/secrets/$h
            if [ ! -f "$blob" ]; then
                failed_at=$i why="stage $ph: blob $h of $path is not in the store"
                return 1
            fi
            printf '%s\t%s\t%s\t%s\n' "$mode" "$owner:$group" "$blob" "$sl_g/$ph/files$path" >>"$sl_t/$i.list" ;;
        d)
            # (a directory line has no blob: its path is the fifth field)
            if ! { is_path "$h" && is_mode "$mode" && is_owner "$owner" && is_owner "$group"; }; then
                failed_at=$i why="stage $ph: bad directory line for '$h'"
                return 1
            fi ;;
        esac
    done <"$sl_t/lines"
}

# stage_files TMP G TODO: stage the phases TODO (`I:PHASE` words, checked
# by stage_lists) into G at once. Every generation has its own copy of each
# file (a reflink where the file system can): a hand edit through a managed
# path changes the live generation only -- never the store or another
# generation -- and `verify` sees it. Created 0600 (umask 077), then owner,
# then mode: a file of a secret is never readable by anyone but root before
# it has its owner. A stage that fails (a full disk) takes its half-copied
# phases with it; each phase is complete only once its stat is on disk.
stage_files() {
    sf_t=$1 sf_g=$2 sf_todo=$3 all=$1/all
    set --
    for w in $sf_todo; do
        g=$sf_g/${w#*:}
        [ ! -e "$g" ] && [ ! -L "$g" ] || rm -rf "$g"
        on_exit_remove "$g"
        set -- "$@" "$g/files"
    done
    mkdir -p -- "$@"
    set --
    for w in $sf_todo; do
        mv "$sf_t/${w%%:*}" "$sf_g/${w#*:}/manifest"
        set -- "$@" "$sf_t/${w%%:*}.list"
    done
    cat -- "$@" >"$all"
    awk -F"$TAB" '{ p = $4; sub(/\/[^\/]*$/, "", p); print p }' "$all" | sort -u | xargs -d '\n' -r mkdir -p --
    umask 077
    stage_copies "$sf_t" "$sf_g" "$all"
    # one list of destinations per owner and per mode, then one command each
    awk -F"$TAB" -v t="$sf_t" '{ print $4 > (t "/owner." $2); print $4 > (t "/mode." $1) }' "$all"
    if is_root; then
        for f in "$sf_t"/owner.*; do
            [ -f "$f" ] || continue
            # root's copy is root's already
            case ${f##*/owner.} in root:root | 0:0) continue ;; esac
            xargs -d '\n' -r chown "${f##*/owner.}" -- <"$f"
        done
    fi
    for f in "$sf_t"/mode.*; do
        [ -f "$f" ] || continue
        xargs -d '\n' -r chmod "${f##*/mode.}" -- <"$f"
    done
    umask 022
    stage_stats "$sf_t" "$sf_g" "$sf_todo"
    # On disk before anything can point at it.
    sync -f "$sf_g"
    for w in $sf_todo; do
        g=$sf_g/${w#*:}
        : >"$g/.complete"
        keep "$g"
    done
}

# stage_copies TMP G ALL: each blob of ALL (`mode TAB owner:group TAB blob
# TAB destination` lines, destinations below G) copied to its destination,
# made under the caller's umask. Blobs under a MiB go through tar, up to 128
# to a pair of processes, each renamed on its way by a --transform of its
# own (a `cp` a file was most of staging's time: ~2 ms a process on a busy
# node, 0.97 s for 338 files); larger ones, and a blob's second
# destination, by `cp --reflink=auto`, which costs nothing where the file
# system has reflinks (tar would copy every byte).
stage_copies() {
    sc_t=$1 sc_g=$2
    cut -f3 "$3" | xargs -d '\n' -r stat -c %s -- >"$sc_t/sizes"
    # sc_t/tar: `BATCH TAB MEMBER TAB NAME` (the member relative to R, the
    # name to G; a batch's arguments stay far below ARG_MAX); sc_t/cp:
    # `BLOB TAB DESTINATION`
    : >"$sc_t/tar"
    : >"$sc_t/cp"
    paste "$sc_t/sizes" "$3" | awk -F"$TAB" -v OFS="$TAB" -v t="$sc_t" -v r="$R/" -v g="$sc_g/" '
        function under(p, d) { return substr(p, 1, length(d)) == d }
        $1 < 1048576 && under($4, r) && under($5, g) && !seen[$4]++ {
            if (n == 128 || size > 262144) { batch++; n = 0; size = 0 }
            n++; size += 2 * length($5) + 160
            print batch + 0, substr($4, length(r) + 1), substr($5, length(g) + 1) > (t "/tar")
            next
        }
        { print $4, $5 > (t "/cp") }'
    # a transform replaces with its text as written but for \, & and the
    # delimiter |: each escaped (members are store/HASH or secrets/HASH)
    sed 's/[\\&|]/\\&/g' "$sc_t/tar" >"$sc_t/tar.esc"
    set --
    sc_cur=''
    while IFS=$TAB read -r b m name; do
        if [ "$b" != "$sc_cur" ] && [ $# -gt 0 ]; then
            stage_tar "$@"
            set --
        fi
        sc_cur=$b
        set -- "$@" "--transform=s|^$m\$|$name|" "$m"
    done <"$sc_t/tar.esc"
    [ $# -eq 0 ] || stage_tar "$@"
    while IFS=$TAB read -r blob dst; do
        cp --reflink=auto "$blob" "$dst"
    done <"$sc_t/cp"
}

# stage_tar ARG...: one batch of stage_copies: pairs of a --transform and
# its member, read from R and written below sc_g, each member a name of its
# own (its parents made already).
stage_tar() {
    { tar -c -f - -C "$R" --hard-dereference "$@" || : >"$sc_t/tar.bad"; } |
        tar -x -f - -C "$sc_g" -m --no-same-owner --no-same-permissions
    [ ! -e "$sc_t/tar.bad" ] || die "stage: cannot read a blob of the store"
}

# stage_stats TMP G TODO: each phase's `stat` (file_stats' lines: its
# files' paths, sorted, with size, mtime, mode and owner) from one stat of
# every file staged; a phase on its own if that one fails.
stage_stats() {
    for w in $3; do : >"$2/${w#*:}/stat"; done
    if cut -f4 "$1/all" | sort | xargs -d '\n' -r stat -c "%n$TAB$STAT_FMT" -- >"$1/stats" 2>/dev/null; then
        # G/PHASE/files/PATH TAB STAT -> /PATH TAB STAT into G/PHASE/stat
        awk -v g="$2/" '{ s = substr($0, length(g) + 1); i = index(s, "/"); print substr(s, i + 6) > (g substr(s, 1, i - 1) "/stat") }' "$1/stats"
        return 0
    fi
    for w in $3; do
        g=$2/${w#*:}
        file_stats "$g/files" "$g/manifest" >"$g/stat"
    done
}

# heal DIR: put back, from the store, every file of staged phase DIR that
# was edited by hand (its stat differs from the one recorded at stage):
# the generation a switch leaves is a rollback target and must be as it
# was staged. A blob whose size is not the size recorded at stage
# (damaged since) is not copied; the stat record is then left as it was,
# so the file still shows as edited when the generation is linked again
# (and is re-staged from a verified blob).
heal() {
    [ -f "$1/stat" ] || return 0
    unhealed=$(file_stats "$1/files" "$1/manifest" | stat_changed "$1/stat" - | while IFS= read -r path; do
        line=$(entries "$1/manifest" f | awk -F"$TAB" -v p="$path" '$6 == p' | head -n 1)
        [ -n "$line" ] || continue
        IFS=$TAB read -r _ mode owner group h _ <<EOL
$line
EOL
        b=$R/store/$h
        [ -f "$b" ] || b=$R/secrets/$h
        want=$(awk -F"$TAB" -v p="$path" '$1 == p { split($2, s, " "); print s[1] }' "$1/stat")
        if [ ! -f "$b" ] || [ "$(stat -c %s "$b")" != "$want" ]; then
            echo "$path"
            continue
        fi
        umask 077
        cp --reflink=auto "$b" "$1/files$path.tmp"
        if is_root; then chown "$owner:$group" "$1/files$path.tmp"; fi
        chmod "$mode" "$1/files$path.tmp"
        mv -f "$1/files$path.tmp" "$1/files$path"
        umask 022
    done)
    [ -n "$unhealed" ] || file_stats "$1/files" "$1/manifest" >"$1/stat"
}

# note_created KIND PATH: PATH (no prefix) and each of its parents that
# does not exist yet are about to be made by a switch: remember them in
# `created`, one `KIND TAB PATH` line each (KIND d: a declared directory,
# p: a parent made for a file or directory), for `forget`. Builtins only.
note_created() {
    k=$1 d=$2
    while [ -n "$d" ] && [ ! -d "$P$d" ]; do
        printf '%s\t%s\n' "$k" "$d" >>"$R/created"
        k=p d=${d%/*}
    done
}

# switch GEN|none PHASE: point phases/PHASE at generations/GEN/PHASE with one
# rename, then fix up the managed symlinks and directories.
cmd_switch() {
    [ $# -eq 2 ] && is_name "$2" || die "usage: switch GEN|none PHASE"
    n=$1 ph=$2 link=$R/phases/$2
    if [ "$n" = none ]; then
        new='' newm=''
    else
        is_gen "$n" || die "switch: bad generation '$n'"
        [ -f "$R/generations/$n/$ph/.complete" ] || die "switch: generation $n of phase $ph is not staged"
        new=../generations/$n/$ph newm=$R/generations/$n/$ph/manifest
    fi
    # Until the next commit, the node says a run moved links (status
    # prints `pending`): the deployer then never takes it as unchanged.
    [ -f "$R/pending" ] || : >"$R/pending"
    oldm=''
    if [ -L "$link" ]; then
        oldg=$R/generations/$(readlink "$link" | cut -d/ -f3)/$ph
        oldm=$oldg/manifest
        heal "$oldg"
    fi
    # 1. directories (created or fixed; never removed by a switch: they may
    # hold data -- only `forget`, at the end of a reset, removes those
    # kdeploy created)
    entries "$newm" d | while IFS=$TAB read -r _ mode owner group path; do
        [ -d "$P$path" ] || note_created d "$path"
        mkdir -p "$P$path"
        if is_root; then chown "$owner:$group" "$P$path"; fi
        chmod "$mode" "$P$path"
    done
    # 2. the flip: every already-managed file of the phase changes here, at once
    mkdir -p "$R/phases"
    if [ -n "$new" ]; then
        ln -sfn "$new" "$R/phases/.$ph.tmp"
        mv -T "$R/phases/.$ph.tmp" "$link"
    else
        rm -f "$link"
    fi
    # 3. managed paths new to the phase get their symlink into the phase
    # link: in place of what is there (kept in displaced/ if unmanaged) by
    # a rename each; where nothing is, one `ln` per directory for them all
    # (a process per file was most of a first converge's switch of a phase
    # of many files). Builtins decide; a readlink only where a link is.
    sw_new=$R/phases/.$ph.new
    : >"$sw_new"
    entries "$newm" f | while IFS=$TAB read -r _ _ _ _ _ path; do
        dst=$P$path target=$R/phases/$ph/files$path
        if [ -L "$dst" ]; then cur=$(readlink "$dst" || true); else cur=''; fi
        [ "$cur" != "$target" ] || continue
        if [ -d "$dst" ] && [ ! -L "$dst" ]; then die "switch: $path is a directory on the node"; fi
        sw_dir=${dst%/*}
        [ -n "$sw_dir" ] || sw_dir=/
        if [ ! -d "$sw_dir" ]; then
            note_created p "${path%/*}"
            mkdir -p "$sw_dir"
        fi
        if [ -e "$dst" ] || [ -L "$dst" ]; then
            case $cur in
            "$R"/phases/*) ;;
            *) # an unmanaged original: keep it once, restored if the path leaves
                if [ ! -e "$R/displaced$path" ] && [ ! -L "$R/displaced$path" ]; then
                    mkdir -p "$R/displaced${path%/*}"
                    cp -P -p "$dst" "$R/displaced$path"
                fi ;;
            esac
            ln -sfn "$target" "$dst.kdeploy-tmp"
            mv -T "$dst.kdeploy-tmp" "$dst"
        else
            printf '%s\t%s\n' "$sw_dir" "$target" >>"$sw_new"
        fi
    done
    link_new "$sw_new"
    rm -f "$sw_new"
    # 4. managed paths that left the phase and are still our links: remove
    # (restore a displaced original). Which left, by one awk; their links'
    # targets by one readlink (a line each; any other count of lines, a
    # target with a newline: one readlink each); the links by one rm.
    [ -n "$oldm" ] && [ -f "$oldm" ] || return 0
    sw_t=$R/phases/.$ph.left
    file_paths "$newm" >"$sw_t.keep"
    file_paths "$oldm" | awk -v f="$sw_t.keep" 'BEGIN { while ((getline l <f) > 0) keep[l] } !($0 in keep)' |
        while IFS= read -r path; do
            [ ! -L "$P$path" ] || printf '%s\n' "$path"
        done >"$sw_t.paths"
    while IFS= read -r path; do printf '%s\n' "$P$path"; done <"$sw_t.paths" >"$sw_t.dsts"
    xargs -d '\n' -r readlink -- <"$sw_t.dsts" >"$sw_t.targets" 2>/dev/null || :
    if [ "$(wc -l <"$sw_t.targets")" = "$(wc -l <"$sw_t.paths")" ]; then
        paste -d "$TAB" "$sw_t.paths" "$sw_t.targets"
    else
        while IFS= read -r path; do printf '%s\t%s\n' "$path" "$(readlink "$P$path" || true)"; done <"$sw_t.paths"
    fi | while IFS=$TAB read -r path cur; do
        [ "$cur" = "$R/phases/$ph/files$path" ] || continue
        if [ -e "$R/displaced$path" ] || [ -L "$R/displaced$path" ]; then
            mv -T "$R/displaced$path" "$P$path"
        else
            printf '%s\n' "$P$path"
        fi
    done >"$sw_t.gone"
    xargs -d '\n' -r rm -f -- <"$sw_t.gone"
    rm -f "$sw_t.keep" "$sw_t.paths" "$sw_t.dsts" "$sw_t.targets" "$sw_t.gone"
}

# link_new LIST: for each `DIR TAB TARGET` line of LIST, a symlink
# DIR/NAME to TARGET, NAME being TARGET's last part (a phase's file and its
# managed path share it), where nothing is yet: one `ln -s -t DIR` per
# directory (sorted, so each directory's targets come together).
link_new() {
    [ -s "$1" ] || return 0
    ln_dir='' ln_n=0 ln_list=$1
    set --
    while IFS=$TAB read -r d t; do
        if [ "$d" != "$ln_dir" ] || [ "$ln_n" -ge 500 ]; then
            [ "$ln_n" -eq 0 ] || ln -s -t "$ln_dir" -- "$@" || die "switch: cannot link into $ln_dir"
            set --
            ln_dir=$d ln_n=0
        fi
        set -- "$@" "$t"
        ln_n=$((ln_n + 1))
    done <<EOL
$(sort -t "$TAB" -k1,1 "$ln_list")
EOL
    [ "$ln_n" -eq 0 ] || ln -s -t "$ln_dir" -- "$@" || die "switch: cannot link into $ln_dir"
}

# status: builtins and one readlink only — this is the whole cost of a no-op run.
cmd_status() {
    if [ -f "$R/current" ]; then
        read -r cur <"$R/current"
        echo "current $cur"
    else
        echo "current none"
    fi
    last=0
    if [ -d "$R/generations" ]; then
        for d in "$R"/generations/*/; do
            [ -d "$d" ] || continue
            d=${d%/}
            d=${d##*/}
            if is_gen "$d" && [ "$d" -gt "$last" ]; then last=$d; fi
        done
    fi
    echo "next $((last + 1))"
    if [ -d "$R/phases" ]; then
        # each target is ../generations/<N>/<phase>
        { readlink "$R"/phases/* 2>/dev/null || true; } | while IFS=/ read -r _ _ n ph; do
            echo "phase $ph $n"
        done
    fi
    if [ -f "$R/pending" ]; then echo pending; fi
    # phases the node moved back by itself since the last commit (cmd_arm)
    if [ -f "$R/rolled-back" ]; then
        while read -r rb; do echo "rolled-back $rb"; done <"$R/rolled-back"
    fi
    # what `put` can decompress (command -v: a builtin, no fork)
    if command -v zstd >/dev/null 2>&1; then echo "has zstd"; fi
    if [ -f "$R/lock.owner" ]; then
        read -r owner <"$R/lock.owner"
        echo "lock $owner"
    fi
}

# verify: what differs on this node from its linked generations, one
# `drift TAB PHASE TAB KIND TAB WHAT TAB WHY` line each: kind file (the
# managed path is not kdeploy's link any more, or the file's size, mtime,
# mode or owner changed since it was staged) or unit (an enabled unit that
# is not running). Changes nothing. It runs on every node on every run, so
# it looks at all phases at once -- one stat of the managed paths, one of
# the files, one systemctl -- rather than forking per file.
cmd_verify() {
    [ -d "$R/phases" ] || return 0
    keep=${1:-}
    # The quick way: nothing at all changed since a verify that found no
    # file drift (verify.ok: the stat of every path it looked at, taken
    # again in one stat call), and the units are asked about alone.
    if [ -f "$R/verify.ok" ] && [ -f "$R/verify.units" ] && verify_snapshot | cmp -s - "$R/verify.ok"; then
        # (read by the shell: a few lines, not worth a cat)
        vu_all=''
        while IFS= read -r vu_l; do vu_all=$vu_all$vu_l$NL; done <"$R/verify.units"
        verify_units_of "${vu_all%"$NL"}"
        return 0
    fi
    [ -z "$keep" ] || rm -f "$R/verify.ok"
    set --
    legacy=''
    for l in "$R"/phases/*; do
        [ -L "$l" ] || continue
        set -- "$@" "$l/manifest"
        [ ! -f "$l/stat" ] || continue
        # staged by an older node program, without stat: compare bytes
        verify_bytes "${l##*/}" "$l"
        legacy="$legacy/^${l##*/}$TAB/d; "
    done
    [ $# -gt 0 ] || return 0
    # PHASE TAB PATH of every managed file
    files=$(grep -H "^f$TAB" "$@" | sed "s|^$R/phases/||; s|/manifest:f$TAB.*$TAB|$TAB|")
    units=$(grep -H "^u$TAB" "$@" |
        sed -n "s|^$R/phases/\([^/]*\)/manifest:u${TAB}\([^${TAB}]*\)${TAB}[^${TAB}]*${TAB}1\(${TAB}.*\)\{0,1\}\$|\1${TAB}\2|p")
    if [ -n "$keep" ]; then
        verify_list "$files" "$units"
        before=$(verify_snapshot)
    fi
    drift=$(
        [ -z "$files" ] || verify_links "$files"
        [ -z "$files" ] || verify_stats "$files" "$legacy"
    )
    [ -z "$drift" ] || printf '%s\n' "$drift"
    verify_units_of "$units"
    # nothing found, and nothing moved while it looked: the next verify may
    # take the quick way (never with phases staged by an older program)
    if [ -n "$keep" ] && [ -z "$drift" ] && [ -z "$legacy" ] && [ "$(verify_snapshot)" = "$before" ]; then
        printf '%s\n' "$before" >"$R/verify.ok.tmp" && mv -f "$R/verify.ok.tmp" "$R/verify.ok"
    fi
}

# verify_list FILES UNITS: what the quick verify stats (verify.paths: every
# phase link, and every managed path and file of a linked generation, one
# a line; FILES: `PHASE TAB PATH` lines) and which units it asks systemd
# about (verify.units: UNITS, `PHASE TAB UNIT` of every enabled unit).
verify_list() {
    {
        printf '%s\n' "$R"/phases/*
        [ -z "$1" ] || printf '%s\n' "$1" | sed "s|^\([^$TAB]*\)$TAB\(.*\)|$P\2\n$R/phases/\1/files\2|"
    } >"$R/verify.paths"
    printf '%s\n' "$2" >"$R/verify.units"
}

# The phases linked now, then the identity, size, times, mode, owner and
# link target of every path of verify.paths, in one stat (a missing path
# says so in its place).
verify_snapshot() {
    printf '%s\n' "$R"/phases/*
    [ -f "$R/verify.paths" ] || return 0
    xargs -r -d '\n' stat -c "%N$TAB%i %s %.9Y %.9Z %a %U %G" -- <"$R/verify.paths" 2>&1
}

# verify_links FILES: every managed path (FILES: `PHASE TAB PATH` lines) is
# a link into its phase.
verify_links() {
    printf '%s\n' "$1" | sed "s|^[^$TAB]*$TAB|$P|" |
        QUOTING_STYLE=literal xargs -d '\n' stat -c '%N' -- 2>/dev/null |
        diff /dev/fd/3 - 3<<EOF | while IFS= read -r d; do
$(printf '%s\n' "$1" | sed "s|^\([^$TAB]*\)$TAB\(.*\)|$P\2 -> $R/phases/\1/files\2|")
EOF
            case $d in
            "<"*)
                t=${d#* -> "$R"/phases/}
                d=${d#< "$P"}
                printf 'drift\t%s\tfile\t%s\treplaced by something else\n' "${t%%/*}" "${d%% -> *}" ;;
            esac
        done
}

# verify_stats FILES LEGACY: each file of a linked generation has the stat
# recorded when it was staged (its phase's `stat`, from file_stats: size,
# mtime, mode, owner, ctime); LEGACY: sed commands dropping the phases
# without one. An edited file and a missing one: one drift line each.
verify_stats() {
    now=$(printf '%s\n' "$1" | sed "$2 s|^\([^$TAB]*\)$TAB|phases/\1/files|" | (cd "$R" &&
        xargs -r -d '\n' stat -c "%n$TAB$STAT_FMT" -- 2>/dev/null) | sed "s|^phases/\([^/]*\)/files|\1$TAB|")
    grep -H '' "$R"/phases/*/stat 2>/dev/null | sed "s|^$R/phases/||; s|/stat:|$TAB|" |
        stat_changed - /dev/fd/3 3<<EOF | while IFS=$TAB read -r ph path; do
$now
EOF
            printf 'drift\t%s\tfile\t%s\tedited (size, time, mode or owner)\n' "$ph" "$path"
        done
}

# verify_bytes PHASE DIR: a phase staged before stat files existed.
verify_bytes() {
    entries "$2/manifest" f | while IFS=$TAB read -r _ _ _ _ h path; do
        b=$R/store/$h
        [ -f "$b" ] || b=$R/secrets/$h
        cmp -s "$2/files$path" "$b" ||
            printf 'drift\t%s\tfile\t%s\tedited (content)\n' "$1" "$path"
    done
}

# The enabled units UNITS (`PHASE TAB UNIT` lines) are active: one
# systemctl for all, a line of state per unit, in order (all active:
# nothing more is forked). Its exit status says nothing we need (0 when
# any one unit is active), and a node whose every unit is stopped must
# still answer, with a drift line per unit.
verify_units_of() {
    [ -n "$1" ] || return 0
    vu_names='' want=''
    while IFS=$TAB read -r _ vu_u; do
        vu_names=$vu_names$vu_u$NL want=${want:+$want$NL}active
    done <<EOF
$1
EOF
    # one word per line, never a pattern (the names come from manifests)
    set -f
    IFS=$NL
    # shellcheck disable=SC2086
    states=$(systemctl is-active -- $vu_names 2>/dev/null) || true
    unset IFS
    set +f
    [ "$states" != "$want" ] || return 0
    printf '%s\n' "$states" | paste /dev/fd/3 - 3<<EOF | while IFS=$TAB read -r ph u state; do
$1
EOF
        [ "$state" = active ] || printf 'drift\t%s\tunit\t%s\tinactive\n' "$ph" "$u"
    done
}

# commit GEN NODE-HASH <PHASE-RECORD: make GEN the committed generation
# ($record: the input, read before the command took lock.busy).
# A non-empty stdin is GEN's phase record (`kdeploy-phases`: one
# `name TAB hash TAB generation TAB active` line per phase), written first;
# an empty one keeps the record GEN has (a rollback returns to it).
cmd_commit() {
    [ $# -eq 2 ] && is_gen "$1" && is_hash "$2" || die "usage: commit GEN NODE-HASH <PHASE-RECORD"
    d=$R/generations/$1
    if [ -n "$record" ]; then
        # A run that only took phases away staged nothing: its generation
        # is its phase record alone, every phase living in an older one.
        mkdir -p "$d"
        printf '%s\n' "$record" >"$d/kdeploy-phases.tmp"
        mv -f "$d/kdeploy-phases.tmp" "$d/kdeploy-phases"
    else
        [ -d "$d" ] || die "commit: generation $1 was never staged"
        [ -f "$d/kdeploy-phases" ] || die "commit: generation $1 has no phase record"
    fi
    echo "$2" >"$d/node-hash"
    printf '%s %s\n' "$1" "$2" >"$R/current.tmp"
    mv -f "$R/current.tmp" "$R/current"
    rm -f "$R/pending" "$R/rolled-back"
    # A committed generation survives a power cut.
    sync -f "$R/current"
}

# Self-rollback (deploy-rs's "magic rollback"). Before the deployer switches
# a phase that may cut it off (an sshd or firewall setting), it arms the
# node with the way back -- for that phase and every other one the run has
# switched on this node, last first: the generation each goes back to and
# the unit operations around its switch back -- and a deadline; once the
# phase's checks pass it disarms the node over a *new* SSH connection, which
# shows that the node still takes one. A watchdog outside the SSH session (a
# transient systemd unit; under KDEPLOY_PREFIX a detached process) waits out
# the deadline, then takes the run lock as a run does -- so never while a
# live deployer holds it -- and, still armed, moves every armed phase back by
# itself and records that in `rolled-back`, which `status` prints until the
# next commit. A run that takes the lock disarms (cmd_lock).
# arm ID SECONDS STEP...  (STEP: one word list `PHASE GEN|none OP... / OP...`)
cmd_arm() {
    [ $# -ge 3 ] && is_token "$1" && is_gen "$2" || die "usage: arm ID SECONDS STEP..."
    ar_id=$1 ar_secs=$2
    shift 2
    ar_steps=''
    set -f
    for ar_step in "$@"; do
        # shellcheck disable=SC2086  # a step is a list of words
        set -- $ar_step
        [ $# -ge 3 ] && is_name "$1" || die "arm: bad step '$ar_step'"
        case $2 in
        none) ;;
        *) is_gen "$2" && [ -f "$R/generations/$2/$1/.complete" ] || die "arm: generation $2 of phase $1 is not staged" ;;
        esac
        ar_slash=''
        for op in "$@"; do
            case $op in
            /) ar_slash=1 ;;
            '' | *[!A-Za-z0-9._@:,-]*) die "arm: bad word '$op' in step '$ar_step'" ;;
            esac
        done
        [ -n "$ar_slash" ] || die "arm: no / between the operations before and after the switch back in '$ar_step'"
        ar_steps="${ar_steps}step $*$NL"
    done
    set +f
    printf 'id %s\ndeadline %s\n%s' "$ar_id" "$(($(date +%s) + ar_secs))" "$ar_steps" >"$R/armed.tmp"
    mv -f "$R/armed.tmp" "$R/armed"
    ar_self=$(readlink -f "$0")
    # (the watchdog holds neither the lock nor lock.busy: it takes them itself)
    if [ -z "$P" ]; then
        systemd-run --quiet --collect --unit "kdeploy-self-rollback-$ar_id" \
            sh "$ar_self" --protocol "$PROTOCOL" watchdog "$ar_id" >&2 8>&- 9>&- ||
            { rm -f "$R/armed"; die "arm: systemd-run could not start the watchdog"; }
    else
        setsid sh "$ar_self" --protocol "$PROTOCOL" watchdog "$ar_id" </dev/null >/dev/null 2>&1 8>&- 9>&- &
    fi
}

# disarm ID: the node armed as ID is the deployer's again (the phase's
# checks passed and a new connection reached the node, or the deployer
# moves it back itself); `not-found` when it is not armed (any more).
cmd_disarm() {
    [ $# -eq 1 ] && is_token "$1" || die "usage: disarm ID"
    armed_field id
    [ "$af" = "$1" ] || fail not-found "armed $1"
    rm -f "$R/armed"
}

# armed_field NAME: af= that line of the armed record ('' when none)
armed_field() { af=$(sed -n "s/^$1 //p" "$R/armed" 2>/dev/null) || af=''; }

# watchdog ID: see cmd_arm (started by it, never sent by the deployer).
cmd_watchdog() {
    [ $# -eq 1 ] && is_token "$1" || die "usage: watchdog ID"
    while :; do
        armed_field id
        [ "$af" = "$1" ] || exit 0
        armed_field deadline
        [ "$(date +%s)" -lt "$af" ] || break
        sleep 1
    done
    exec 9>>"$R/lock"
    flock 9
    armed_field id
    [ "$af" = "$1" ] || exit 0
    printf 'kdeploy-node self-rollback pid=%s since=%s\n' $$ "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$R/lock.owner"
    # the silent run's commands are refused from here on, and waited for
    write_token released -
    exec 8>>"$R/lock.busy"
    until flock -w "$drain_wait" 8; do :; done
    exec 8>&-
    armed_field step
    printf '%s\n' "$af" | while read -r wd_phase wd_from wd_ops; do
        wd_failed=''
        set -f
        # shellcheck disable=SC2086  # one operation per word
        (cmd_units ${wd_ops%%/*}) || wd_failed=${wd_failed:+$wd_failed,}units-before
        (cmd_switch "$wd_from" "$wd_phase") || wd_failed=${wd_failed:+$wd_failed,}switch
        # shellcheck disable=SC2086
        (cmd_units ${wd_ops#*/}) || wd_failed=${wd_failed:+$wd_failed,}units-after
        set +f
        printf '%s %s %s %s\n' "$wd_phase" "$wd_from" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
            "${wd_failed:+failed:}${wd_failed:-ok}" >>"$R/rolled-back"
    done
    rm -f "$R/armed"
}

# state: what a changed node's plan needs in one round trip -- the phase
# record of the committed generation and the manifest each phase link
# points at, in `@record` / `@manifest PHASE` sections.
cmd_state() {
    echo @record
    if [ -f "$R/current" ]; then
        read -r cur _ <"$R/current"
        cat "$R/generations/$cur/kdeploy-phases" 2>/dev/null || true
    fi
    [ -d "$R/phases" ] || return 0
    for l in "$R"/phases/*; do
        [ -L "$l" ] || continue
        echo "@manifest ${l##*/}"
        cat "$l/manifest" 2>/dev/null || true
    done
}

# phase-record GEN: the phase record generation GEN was committed with.
cmd_phase_record() {
    [ $# -eq 1 ] && is_gen "$1" || die "usage: phase-record GEN"
    [ -f "$R/generations/$1/kdeploy-phases" ] || fail not-found "generation $1 has no phase record"
    cat "$R/generations/$1/kdeploy-phases"
}

# gc-info: every generation directory, as `@gen N` followed by the phase
# record it was committed with (none: never committed), for the
# deployer's pure GC plan (`src/node/gc.rs`).
cmd_gc_info() {
    [ -d "$R/generations" ] || return 0
    ls "$R/generations" | sort -n | while read -r n; do
        is_gen "$n" || continue
        echo "@gen $n"
        cat "$R/generations/$n/kdeploy-phases" 2>/dev/null || true
    done
}

# The generations phase links point into, one per line.
linked_generations() {
    [ -d "$R/phases" ] || return 0
    { readlink "$R"/phases/* 2>/dev/null || true; } | cut -d/ -f3
}

# gc [--dry-run] GEN...: remove these generation directories (never the
# current one nor one a phase link points into: refused), then every blob
# and secret no remaining generation's manifest names, and uploads left
# half-done in store/.tmp and secrets/.tmp. Runs under the lock the
# deployer holds (like stage and switch), so no run is in flight. Prints
# `removed generation N BYTES`, `removed blob|secret|partial NAME BYTES`,
# then `referenced HASH` for every blob the remaining generations name
# (the deployer keeps those in its own store). Writes nothing but
# removals: it works on a full disk. --dry-run: the same lines, nothing
# removed.
cmd_gc() {
    dry=''
    if [ "${1:-}" = --dry-run ]; then dry=1; shift; fi
    cur=''
    [ -f "$R/current" ] && read -r cur _ <"$R/current"
    linked=" $(linked_generations | tr '\n' ' ') "
    for n in "$@"; do
        is_gen "$n" || die "gc: bad generation '$n'"
        [ "$n" != "$cur" ] || die "gc: generation $n is the committed one"
        case $linked in *" $n "*) die "gc: generation $n is linked by a phase" ;; esac
    done
    gone=" $* "
    for n in "$@"; do
        d=$R/generations/$n
        [ -d "$d" ] || continue
        bytes=$(du -sb "$d" | cut -f1)
        [ -n "$dry" ] || rm -rf "$d"
        printf 'removed generation %s %s\n' "$n" "$bytes"
    done
    refs=$(for m in "$R"/generations/*/*/manifest; do
        [ -f "$m" ] || continue
        n=${m#"$R"/generations/}
        case $gone in *" ${n%%/*} "*) continue ;; esac
        entries "$m" f | cut -f5
    done | sort -u)
    for kind in store secrets; do
        [ -d "$R/$kind" ] || continue
        for b in "$R/$kind"/* "$R/$kind"/.tmp/*; do
            h=${b##*/}
            what=blob
            [ "$kind" = store ] || what=secret
            case $b in
            # a file or (put, fetch) a directory of a command killed in flight
            */.tmp/*) [ -e "$b" ] || continue; what=partial ;;
            *)
                [ -f "$b" ] || continue
                if printf '%s\n' "$refs" | grep -qxF -- "$h"; then continue; fi ;;
            esac
            bytes=$(du -sb "$b" | cut -f1)
            [ -n "$dry" ] || rm -rf "$b"
            printf 'removed %s %s %s\n' "$what" "$h" "$bytes"
        done
    done
    printf '%s\n' "$refs" | while read -r h; do
        [ -z "$h" ] || printf 'referenced %s\n' "$h"
    done
}

# forget: the last step of a reset, once every phase is unlinked (refused
# while a phase link remains; unlinking restored every displaced original):
# remove the directories switches created (see note_created), deepest
# first -- a declared one with whatever it holds (data kdeploy's services
# wrote: a reset returns the node to how it was before its first switch),
# a parent only when empty -- then the state directory itself. Prints
# `removed PATH` per directory removed. The lock shell of the running
# deployer keeps its open file; nothing else of kdeploy remains.
cmd_forget() {
    if [ -d "$R/phases" ]; then
        for l in "$R"/phases/*; do
            if [ -L "$l" ]; then die "forget: phase ${l##*/} is still linked"; fi
        done
    fi
    if [ -f "$R/created" ]; then
        sort -u -t "$TAB" -k2,2r -k1,1r "$R/created" | while IFS=$TAB read -r kind path; do
            is_path "$path" || continue
            [ -d "$P$path" ] && [ ! -L "$P$path" ] || continue
            case $kind in
            # never across a mount (kubelet's volumes): a reset hook unmounts
            d) rm -rf --one-file-system -- "$P$path" || die "forget: could not remove $path" ;;
            p) rmdir -- "$P$path" 2>/dev/null || continue ;;
            *) continue ;;
            esac
            printf 'removed %s\n' "$path"
        done
    fi
    rm -rf -- "$R"
}

# manifest GEN PHASE: the manifest PHASE was staged with in GEN.
cmd_manifest() {
    [ $# -eq 2 ] && is_gen "$1" && is_name "$2" || die "usage: manifest GEN PHASE"
    [ -f "$R/generations/$1/$2/manifest" ] || fail not-found "generation $1 has no phase $2"
    cat "$R/generations/$1/$2/manifest"
}

# blob HASH MAX: `size N` of store blob HASH, then its bytes when N is at
# most MAX (what `kdeploy diff` shows of a file's deployed version). A
# secret is never read back.
cmd_blob() {
    [ $# -eq 2 ] && is_hash "$1" && is_gen "$2" || die "usage: blob HASH MAX"
    [ -f "$R/store/$1" ] || fail not-found "blob $1 is not in the store"
    size=$(stat -c %s "$R/store/$1")
    echo "size $size"
    [ "$size" -gt "$2" ] || cat "$R/store/$1"
}

# unit_journal UNIT N: the last N log lines about UNIT. Like `journalctl -u`, plus
# UNIT=-tagged lines from any process: systemd's forked child logs why it could
# not exec the unit's command ("Failed at step CGROUP ...") before it is in the
# unit's cgroup, and `-u` (UNIT= only from PID 1) leaves exactly those out.
# `--sync` first: lines logged just before (a start that failed a moment ago)
# are then in what we read.
unit_journal() {
    journalctl --sync 2>/dev/null || true
    journalctl -n "$2" --no-pager _SYSTEMD_UNIT="$1" + UNIT="$1" + OBJECT_SYSTEMD_UNIT="$1" \
        + COREDUMP_UNIT="$1" 2>&1 || true
}

# What a failed unit operation reports about UNIT: its status (state, result,
# the exit status of each process it ran) and its last log lines.
unit_report() {
    systemctl status --no-pager --full --lines=0 -- "$1" 2>&1 || true
    unit_journal "$1" 20
}

# units OP[:UNIT,UNIT...]...: run in the order given; OP is daemon-reload,
# stop, start, restart, reload, enable, disable. A failed start/restart/reload
# refuses `unit-failed UNIT VERB STATE` for each unit concerned, each
# followed by that unit's status and journal. systemctl's own output goes
# to stderr: `units` prints nothing on stdout.
cmd_units() {
    exec >&2
    for op in "$@"; do
        verb=${op%%:*}
        list=''
        case $op in *:*) list=$(printf '%s' "${op#*:}" | tr ',' ' ') ;; esac
        for u in $list; do is_name "$u" || die "units: bad unit name '$u'"; done
        case $verb in
        daemon-reload) systemctl daemon-reload ;;
        stop | enable)
            # shellcheck disable=SC2086
            systemctl "$verb" -- $list || die "systemctl $verb $list failed" ;;
        disable)
            # `systemctl disable` also unlinks a symlinked unit file, i.e. our
            # managed link: put it back if it was there.
            for u in $list; do
                f=$P/etc/systemd/system/$u
                t=$(readlink "$f" 2>/dev/null || true)
                systemctl disable -- "$u" || die "systemctl disable $u failed"
                if [ -n "$t" ] && [ ! -L "$f" ]; then ln -sfn "$t" "$f"; fi
            done ;;
        start | restart | reload)
            # A unit that failed or restarted often (an earlier failed
            # switch, a rollback) may sit in systemd's start rate limit;
            # a deliberate deploy action must not be refused for that.
            # shellcheck disable=SC2086
            systemctl reset-failed -- $list 2>/dev/null || true
            # shellcheck disable=SC2086
            if ! systemctl "$verb" -- $list; then
                shown=''
                for u in $list; do
                    systemctl is-active --quiet -- "$u" && continue
                    refuse_line unit-failed "$u $verb inactive"
                    unit_report "$u" >&2
                    shown=1
                done
                # systemctl failed, yet every unit is active now (a failed
                # reload leaves the unit running; Restart= may have brought
                # it back): still show what happened to each.
                if [ -z "$shown" ]; then
                    for u in $list; do
                        refuse_line unit-failed "$u $verb active"
                        unit_report "$u" >&2
                    done
                fi
                exit "$EX_UNIT_FAILED"
            fi ;;
        *) die "units: unknown operation '$verb'" ;;
        esac
    done
}

# requires: what this program needs of a node, in one place, checked by
# the deployer before it installs the program (`refuse unsupported` naming
# the first thing missing). Beyond a POSIX sh: GNU coreutils (stat -c,
# head -c, dd iflag=count_bytes, mv -T -t, ln -n, cp --reflink, sync -f, du -b, timeout, sha256sum
# --check --quiet, mktemp -d, readlink, date -u), GNU findutils (xargs -d,
# -r), GNU diffutils (diff, cmp), GNU tar (-x -m --no-same-owner, --transform), awk, sed, grep -x -F, sort -t -k,
# util-linux (flock) and, on a real node (no KDEPLOY_PREFIX), systemd
# (systemctl, journalctl). zstd, curl and wget are used when present.
# need WHAT CMD ARG...: CMD runs, or the node lacks WHAT.
need() {
    nd_what=$1
    shift
    "$@" >/dev/null 2>&1 || fail unsupported "$nd_what"
}
cmd_requires() {
    for tool in awk cat chmod chown cmp cp cut date dd diff du flock grep head id ln mkdir mktemp mv paste \
        readlink rm sed setsid sha256sum sleep sort stat sync tar timeout touch tr wc xargs; do
        command -v "$tool" >/dev/null 2>&1 || fail unsupported "no $tool"
    done
    if [ -z "$P" ]; then
        for tool in systemctl journalctl systemd-run; do
            command -v "$tool" >/dev/null 2>&1 || fail unsupported "no $tool (systemd)"
        done
    fi
    # the GNU features, each tried on a scratch file
    d=$(mktemp -d "$R/bin/.requires.XXXXXX") || fail unsupported "mktemp -d (GNU coreutils)"
    on_exit_remove "$d"
    printf 'x\n' >"$d/f"
    need "stat -c (GNU coreutils)" stat -c '%s %Y %a %U %G %N' "$d/f"
    need "head -c (GNU coreutils)" head -c 1 "$d/f"
    need "dd iflag=count_bytes,fullblock (GNU coreutils)" \
        sh -c 'dd bs=1M count=1 iflag=count_bytes,fullblock status=none <"$1"' - "$d/f"
    need "mv -t (GNU coreutils)" sh -c 'mkdir "$2" && cp "$1" "$1.t" && mv -f -t "$2" -- "$1.t"' - "$d/f" "$d/t.d"
    need "cp --reflink (GNU coreutils)" cp --reflink=auto "$d/f" "$d/g"
    need "sync -f (GNU coreutils)" sync -f "$d/f"
    need "du -b (GNU coreutils)" du -sb "$d"
    need "ln -n (GNU coreutils)" ln -sfn f "$d/l"
    need "mv -T (GNU coreutils)" mv -T "$d/l" "$d/m"
    need "touch -c (GNU coreutils)" touch -c "$d/f"
    need "timeout (GNU coreutils)" timeout 5 true
    need "date -u +FORMAT" date -u +%Y-%m-%dT%H:%M:%SZ
    need "sha256sum --check --quiet (GNU coreutils)" sh -c 'sha256sum "$1" >"$1.sum" && sha256sum --quiet --check "$1.sum"' - "$d/f"
    need "xargs -d -r (GNU findutils)" sh -c 'printf "%s\n" "$1" | xargs -r -d "\n" test -f' - "$d/f"
    need "flock -n -s -w (util-linux)" sh -c 'flock -n "$1" true && flock -s -w "$2" "$1" true' - "$d/f" "$BUSY_WAIT"
    need "diff (GNU diffutils)" diff "$d/f" "$d/g"
    need "cmp -s (GNU diffutils)" cmp -s "$d/f" "$d/g"
    need "grep -x -F" grep -qxF x "$d/f"
    need "sort -u -t -k" sort -u -t ' ' -k1,1r "$d/f"
    need "tar --transform --hard-dereference, -x -m --no-same-owner --no-same-permissions (GNU tar)" sh -c \
        'tar -c -f "$1.tar" -C "$1" --hard-dereference "--transform=s|^f\$|a\\&b|" f && mkdir "$1/x" && tar -x -f - -C "$1/x" -m --no-same-owner --no-same-permissions <"$1.tar" && cmp -s "$1/f" "$1/x/a&b"' - "$d"
}

# --protocol N: the protocol the deployer speaks (src/node/protocol/): a
# command line that names another one, or none, is refused before anything
# is read (`version`, the detail this program's).
if [ "${1:-}" != --protocol ] || [ "${2:-}" != "$PROTOCOL" ]; then
    fail version "$PROTOCOL"
fi
shift 2
# --held TOKEN CMD ...: the token of the lock this run holds; the
# commands that change the node refuse to run without it (see `held`).
TOKEN=''
if [ "${1:-}" = --held ]; then
    [ $# -ge 2 ] && is_token "$2" || die "usage: --held TOKEN COMMAND ..."
    TOKEN=$2
    shift 2
fi
cmd=${1:-}
if [ $# -gt 0 ]; then shift; fi
case $cmd in
lock) cmd_lock "$@" ;;
have) held; cmd_have ;;
put) held; cmd_put "$@" ;;
put-secrets) held; cmd_put_secrets "$@" ;;
fetch) held; cmd_fetch "$@" ;;
stage) held; cmd_stage "$@" ;;
switch) held; cmd_switch "$@" ;;
run) held; cmd_run "$@" ;;
status)
    cmd_status
    if [ "${1:-}" = --verify ]; then cmd_verify; fi ;;
# (its small input read first: a deployer paused before sending it must not
# hold up, by lock.busy, the run that takes its lock over)
commit) record=$(cat); held; cmd_commit "$@" ;;
state) cmd_state ;;
phase-record) cmd_phase_record "$@" ;;
manifest) cmd_manifest "$@" ;;
blob) cmd_blob "$@" ;;
gc-info) cmd_gc_info ;;
gc) held; cmd_gc "$@" ;;
forget) held; cmd_forget ;;
units) held; cmd_units "$@" ;;
arm) held; cmd_arm "$@" ;;
disarm) held; cmd_disarm "$@" ;;
watchdog) cmd_watchdog "$@" ;;
requires) cmd_requires ;;
*) die "unknown command '$cmd' (lock have put put-secrets fetch stage switch run status commit state phase-record manifest blob gc-info gc forget units arm disarm requires)" ;;
esac
