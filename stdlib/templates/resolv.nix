# resolv.conf texts (Kubespray preinstall 0060-resolvconf, run late as "resolvconf"):
# the node's /etc/resolv.conf pointing at the cluster DNS first, and the upstream-only
# file the kubelet hands to pods with dnsPolicy Default (CoreDNS), which must not point
# back at the cluster DNS.
let
  lib = import ../lib;
  inherit (lib) text;
  inherit (builtins) concatStringsSep map;
in
rec {
  upstreamFile = "/etc/kubernetes/upstream-resolv.conf";

  # kdeploy writes whole files and does not read the node's current resolvers, so it
  # manages resolv.conf only when dns.nameservers says what the upstream resolvers are.
  managed = ctx: node:
    let s = node.settings; in
    node.isK8s && s.dns.resolvconfMode == "host_resolvconf" && ctx.settings.dns.mode != "none" && s.dns.nameservers != [ ];

  search = ctx: node:
    let d = ctx.settings.dns.domain; s = node.settings.dns; in
    (if s.removeDefaultSearchDomains then [ ] else [ "default.svc.${d}" "svc.${d}" ]) ++ s.searchDomains;

  render = { search, nameservers, dns }: text.lines ([ "# Managed by kdeploy." ]
    ++ text.optional (search != [ ]) "search ${concatStringsSep " " search}"
    ++ map (n: "nameserver ${n}") nameservers
    ++ [ "options ndots:${toString dns.ndots} timeout:${toString dns.timeout} attempts:${toString dns.attempts}" ]);

  nodeResolvConf = ctx: node: render {
    search = search ctx node;
    nameservers = text.unique (ctx.clusterDNS ++ node.settings.dns.nameservers);
    dns = node.settings.dns;
  };

  upstreamResolvConf = node: render {
    search = node.settings.dns.searchDomains;
    nameservers = node.settings.dns.nameservers;
    dns = node.settings.dns;
  };
}
