# Constructors for the closure records the engine consumes (see stdlib/README.md,
# "The closure schema"): files, directories, units, hooks, checks, and phases.
# Every field is always present so the JSON shape is uniform.
let
  inherit (builtins) attrNames length head;
  errors = import ./errors.nix;
  reverse = l: builtins.genList (i: builtins.elemAt l (length l - 1 - i)) (length l);

  sourceKinds = [ "text" "file" "artifact" "local" "secret" "secretFile" "secretCommand" ];
in
rec {
  # A file. Give exactly one of: text, file (project-relative path), artifact, local,
  # secret ({ name; make; }: made and kept by the engine on the deployer, see ../secrets.nix),
  # secretFile (the user's own key or token: a project-relative or absolute deployer path,
  # read, sent and shown as a secret; never a plain file, which the shared store, the
  # binary cache and diffs would hold in clear), secretCommand (the same, printed by a
  # program the deployer runs: its argv).
  file = { path, mode ? "0644", owner ? "root", group ? "root", text ? null, file ? null, artifact ? null, local ? null, secret ? null, secretFile ? null, secretCommand ? null }:
    let
      given = builtins.filter (k: k != null) [
        (if text != null then { text = text; } else null)
        (if file != null then { file = file; } else null)
        (if artifact != null then { artifact = artifact; } else null)
        (if local != null then { local = local; } else null)
        (if secret != null then { secret = secret; } else null)
        (if secretFile != null then { secretFile = secretFile; } else null)
        (if secretCommand != null then { secretCommand = secretCommand; } else null)
      ];
    in
    if length given != 1 then errors.fail "internal: file ${path} needs exactly one source (${builtins.concatStringsSep ", " sourceKinds})"
    else if builtins.substring 0 1 path != "/" then errors.fail "internal: file path ${path} is not absolute"
    else { inherit path mode owner group; source = head given; };

  textFile = path: text: file { inherit path text; };

  # An artifact: downloaded once by the deployer and checked against sha256.
  # `member`: path of the wanted file inside a .tar.gz/.tgz archive, or null if the
  # download is the file itself.
  artifact = { name, url, sha256, member ? null }: { inherit name url sha256 member; };

  directory = { path, mode ? "0755", owner ? "root", group ? "root" }: { inherit path mode owner group; };

  # A systemd unit. The engine installs `text` as /etc/systemd/system/<name>.
  unit = { name, text, onChange ? "restart", enable ? true, restartTriggers ? [ ] }:
    if !(builtins.elem onChange [ "restart" "reload" "none" ]) then errors.fail "internal: unit ${name}: bad onChange ${onChange}"
    else { inherit name text onChange enable restartTriggers; };

  # A hook runs `run` (POSIX sh, as root) before ("pre") or after ("post") the phase's
  # switch, unless the `unless` guard exits 0. unless = null: no guard. A "reset" hook
  # never runs on a switch: `kdeploy reset` and `switch --prune` run it before they
  # unlink the phase (its files and units still there); KDEPLOY_RESET is "cluster"
  # when every node of the cluster is reset in the run, "nodes" when others remain
  # (`reset --on`), "pruned" for a node `switch --prune` removes (others remain, and
  # the engine has already taken its etcd member out).
  # `delegate`: the node that runs the hook instead (a drain runs on the anchor, where
  # the admin credentials are); `upgrade`: only in a run that changes
  # kubernetes.version; `disrupts`: its work disturbs the cluster (a control plane
  # joining), so its step goes in the node's rollout batches. All are left out of the
  # record when unset, so the hashes of every other hook stay as they were.
  # A pre or post hook says how a reset undoes what it does to the node (`undo`):
  # a command (reset runs it, as the reset hook NAME-undo, after the phase's own
  # reset hooks, the last hook's first), { by = "HOOK"; } (a reset hook undoes it),
  # or { nothing = "WHY"; } (it changes no file or unit of the node: a check, an
  # object in the cluster's API, kernel state a managed file sets). Only a user's
  # own hook (custom.hooks, `user = true`) may leave it unsaid. `merge` turns the
  # declaration into the reset hook.
  hook = { name, run, when ? "post", unless ? null, delegate ? null, upgrade ? false, disrupts ? false, undo ? null, user ? false }:
    if !(builtins.elem when [ "pre" "post" "reset" ]) then errors.fail "internal: hook ${name}: bad when ${when}"
    else if when != "reset" && undo == null && !user then errors.fail "internal: hook ${name} says nothing of how reset undoes it"
    else if when == "reset" && undo != null then errors.fail "hook ${name}: a reset hook has nothing to undo (undo is for pre and post hooks)"
    else { inherit name when run unless; }
      // (if delegate == null then { } else { inherit delegate; })
      // (if upgrade then { inherit upgrade; } else { })
      // (if disrupts then { inherit disrupts; } else { })
      // (if builtins.isString undo then { __undo = undo; } else { });

  # The reset hooks a phase's hooks declare (`hook`'s undo), in reverse order, and
  # the hooks without their declarations.
  withUndo = hooks:
    let
      undoing = builtins.filter (h: h ? __undo) hooks;
      strip = h: builtins.removeAttrs h [ "__undo" ];
      undoHook = h: { name = "${h.name}-undo"; when = "reset"; run = h.__undo; unless = null; }
        // (if h ? delegate then { inherit (h) delegate; } else { });
    in
    map strip hooks ++ map undoHook (reverse undoing);

  check = { name, run, retries ? 10, delay ? 3 }: { inherit name run retries delay; };

  emptyContent = { files = [ ]; directories = [ ]; units = [ ]; hooks = [ ]; checks = [ ]; };

  # Concatenate several partial contents ({ files?; directories?; ... }).
  merge = parts:
    let get = k: builtins.concatMap (p: p.${k} or [ ]) parts; in
    {
      files = get "files";
      directories = get "directories";
      units = get "units";
      hooks = withUndo (get "hooks");
      checks = get "checks";
    };
}
