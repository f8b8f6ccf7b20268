# Module-style evaluation of a large configuration: 200 service modules
# (imported ten at a time by 20 group modules) plus a base module, through the
# mini NixOS-like module system in lib/modules.nix. Each service module
# declares 9 options and defines config for itself and its neighbour, using
# mkDefault, mkForce (every 10th), mkIf on config values (fixpoint reads),
# mkMerge and nested attrsOf merging.
# The final config (~3000 leaves) is rendered to per-service manifests and
# hashed, so the whole tree is compared between the two evaluators.
# expect: {"cluster":"bench","enabled":133,"leaves":3021,"replicas":370,"sha256":"997081d0fc454c257b925eb88d9a6883ca6f411c5720ec3cc00f0cebb376528d"}
let
  lib = import ./lib/modules.nix;
  inherit (lib) mkOption types mkDefault mkForce mkIf mkMerge evalModules;
  n = 200;
  mod = a: b: a - (a / b) * b;

  svcModule = i: { config, ... }:
    let
      name = "svc${toString i}";
      prev = "svc${toString (i - 1)}";
      cfg = config.services.${name};
    in
    {
      options.services.${name} = {
        enable = mkOption { type = types.bool; default = false; };
        port = mkOption { type = types.int; default = 8000 + i; };
        replicas = mkOption { type = types.int; default = 1; };
        image = mkOption { type = types.str; default = "registry.local/${name}:latest"; };
        args = mkOption { type = types.listOf types.str; default = [ ]; };
        env = mkOption { type = types.attrsOf types.str; default = { }; };
        labels = mkOption { type = types.attrsOf types.str; default = { }; };
        dependsOn = mkOption { type = types.listOf types.str; default = [ ]; };
        script = mkOption { type = types.lines; default = ""; };
      };
      config = mkMerge [
        {
          services.${name} = {
            enable = mkDefault (mod i 3 != 0);
            replicas = mkDefault (1 + mod i 4);
            args = [ "--port=${toString cfg.port}" "--name=${name}" ];
            env = { SERVICE = name; PORT = toString cfg.port; REPLICAS = toString cfg.replicas; };
            labels.app = name;
            script = "exec /bin/${name} ${toString cfg.port}";
          };
        }
        (mkIf cfg.enable {
          cluster.endpoints.${name} = "${name}.svc.cluster.local:${toString cfg.port}";
          cluster.replicaCounts = [ cfg.replicas ];
          services.${name} = {
            labels.tier = if i < n / 2 then "frontend" else "backend";
            script = "echo started ${name}";
          };
        })
        (if i > 0 then {
          services.${prev} = {
            env."NEXT_${toString i}" = name;
            dependsOn = [ name ];
          };
        } else { })
        (mkIf (mod i 10 == 0) {
          services.${name} = {
            replicas = mkForce 5;
            port = 9000 + i;
            image = mkForce "registry.local/${name}:pinned";
          };
        })
      ];
    };

  baseModule = { config, ... }: {
    options.cluster = {
      name = mkOption { type = types.str; };
      domain = mkOption { type = types.str; default = "cluster.local"; };
      endpoints = mkOption { type = types.attrsOf types.str; default = { }; };
      replicaCounts = mkOption { type = types.listOf types.int; default = [ ]; };
      labels = mkOption { type = types.attrsOf types.str; default = { }; };
    };
    config.cluster = {
      name = "bench";
      labels = { owner = "platform"; env = "prod"; };
    };
  };

  # An importer module: imports a group of ten service modules and overrides
  # the cluster name with a lower priority than the base.
  group = g: {
    imports = builtins.genList (j: svcModule (g * 10 + j)) 10;
    config.cluster.name = mkDefault "ignored-${toString g}";
    config.cluster.labels."group${toString g}" = "yes";
  };

  result = evalModules { modules = [ baseModule ] ++ builtins.genList group (n / 10); };
  cfg = result.config;

  manifests = builtins.mapAttrs (name: s: {
    apiVersion = "apps/v1";
    kind = "Deployment";
    metadata = { inherit name; labels = cfg.cluster.labels // s.labels; };
    spec = {
      replicas = s.replicas;
      template.spec.containers = [{
        inherit name;
        image = s.image;
        args = s.args;
        env = map (k: { name = k; value = s.env.${k}; }) (builtins.attrNames s.env);
        ports = [{ containerPort = s.port; }];
      }];
      dependsOn = s.dependsOn;
      script = s.script;
    };
  }) (builtins.removeAttrs cfg.services (builtins.filter (k: !cfg.services.${k}.enable) (builtins.attrNames cfg.services)));

  countLeaves = v:
    if builtins.isAttrs v then builtins.foldl' (a: k: a + countLeaves v.${k}) 0 (builtins.attrNames v)
    else if builtins.isList v then builtins.foldl' (a: x: a + countLeaves x) 0 v
    else 1;
in
{
  cluster = cfg.cluster.name;
  enabled = builtins.length (builtins.attrNames manifests);
  replicas = builtins.foldl' (a: b: a + b) 0 cfg.cluster.replicaCounts;
  leaves = countLeaves cfg;
  sha256 = builtins.hashString "sha256" (builtins.toJSON manifests);
}
