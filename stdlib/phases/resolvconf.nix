# Phase "resolvconf" (Kubespray's late resolv.conf step, dns_late): once cluster DNS
# runs, /etc/resolv.conf on Kubernetes nodes lists the cluster DNS (nodelocaldns or
# CoreDNS) first, then the node's upstream resolvers (dns.nameservers). Only when
# dns.nameservers is set: kdeploy manages whole files and does not read the current one.
ctx: group:
let
  lib = import ../lib;
  resolv = import ../templates/resolv.nix;
in
if !(resolv.managed ctx group) then { }
else {
  files = [ (lib.records.textFile "/etc/resolv.conf" (resolv.nodeResolvConf ctx group)) ];
}
