# Files, a unit, a hook and a check of your own, in a phase of your own: point every
# node's clock at your NTP servers (systemd-timesyncd reads the drop-in when it is
# installed) and run a small service that logs the servers it was started with, so a
# change of servers restarts it. Use it in any cluster's settings:
#
#   settings = { ... } // import ./time-sync.nix { servers = [ "10.0.0.1" ]; };
#
# (or in roleSettings.<role> / nodes.<name>.settings: entries add up, and a node's
# entry of the same name replaces the cluster's). `kdeploy eval` shows the phase
# `time-sync` right after preinstall; `kdeploy diff` shows what a change of servers
# would do; tests/lab/custom.rs converges it on the lab, changes the servers, edits the
# file by hand and rolls back.
#
# `servers` defaults to the lab's host (10.77.0.1, see lab/lab.sh), so the file evaluates
# and converges on the lab as it is (`kdeploy eval clusters/time-sync.nix`); give yours.
{ servers ? [ "10.77.0.1" ] }:
let
  conf = "/etc/systemd/timesyncd.conf.d/kdeploy-ntp.conf";
  list = builtins.concatStringsSep " " servers;
in
{
  custom = {
    phases.time-sync.after = "preinstall";

    files.${conf} = {
      phase = "time-sync";
      text = "# Managed by kdeploy (clusters/time-sync.nix)\n[Time]\nNTP=${list}\n";
    };

    units."time-servers.service" = {
      phase = "time-sync";
      restartTriggers = [ conf ];
      text = ''
        [Unit]
        Description=Log the NTP servers kdeploy configured (clusters/time-sync.nix)

        [Service]
        ExecStart=/bin/sh -c 'grep ^NTP= ${conf}; exec sleep infinity'

        [Install]
        WantedBy=multi-user.target
      '';
    };

    # timesyncd, where installed, reads the new servers
    hooks.restart-timesyncd = {
      phase = "time-sync";
      run = "systemctl try-restart systemd-timesyncd.service";
    };

    checks.time-servers-running = {
      phase = "time-sync";
      run = "systemctl is-active --quiet time-servers.service";
      retries = 5;
      delay = 1;
    };
  };
}
