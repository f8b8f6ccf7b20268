# Options of cluster DNS and add-ons: CoreDNS, nodelocaldns, the DNS autoscaler,
# resolv.conf on the nodes, metrics-server (Kubespray's dns_* and kubernetes-apps).
{ opt, t, versions, ... }:
{
  dns = {
    mode = opt {
      type = t.enum [ "coredns" "coredns_dual" "manual" "none" ]; default = "coredns"; scope = "cluster"; kubespray = "dns_mode";
      description = "Cluster DNS: coredns, coredns_dual (two CoreDNS services), manual (dns.manualServer) or none.";
    };
    domain = opt {
      type = t.domain; default = "cluster.local"; scope = "cluster"; kubespray = "dns_domain";
      description = "Cluster DNS domain.";
    };
    manualServer = opt {
      type = t.nullOr t.ipv4; default = null; scope = "cluster"; kubespray = "manual_dns_server";
      description = "Cluster DNS address when dns.mode is manual.";
    };
    upstreamServers = opt {
      type = t.listOf t.ipv4; default = [ ]; scope = "cluster"; kubespray = "upstream_dns_servers";
      description = "Upstream resolvers for names outside the cluster (empty: the nodes' /etc/resolv.conf as CoreDNS sees it).";
    };
    nameservers = opt {
      type = t.listOf t.ipv4; default = [ ]; kubespray = "nameservers";
      description = "The node's own resolvers, written after the cluster DNS into /etc/resolv.conf (kdeploy does not read the node's current resolv.conf).";
    };
    searchDomains = opt {
      type = t.listOf t.domain; default = [ ]; kubespray = "searchdomains";
      description = "Extra search domains for /etc/resolv.conf.";
    };
    removeDefaultSearchDomains = opt {
      type = t.bool; default = false; kubespray = "remove_default_searchdomains";
      description = "Leave out default.svc.<domain> and svc.<domain> from the search list.";
    };
    ndots = opt {
      type = t.int; default = 2; kubespray = "ndots";
      description = "options ndots in /etc/resolv.conf.";
    };
    timeout = opt {
      type = t.int; default = 2; kubespray = "dns_timeout";
      description = "options timeout in /etc/resolv.conf.";
    };
    attempts = opt {
      type = t.int; default = 2; kubespray = "dns_attempts";
      description = "options attempts in /etc/resolv.conf.";
    };
    resolvconfMode = opt {
      type = t.enum [ "host_resolvconf" "none" ]; default = "host_resolvconf"; kubespray = "resolvconf_mode";
      description = "host_resolvconf: the resolvconf phase writes /etc/resolv.conf pointing at the cluster DNS; none: leave it alone. (Kubespray's docker_dns is not offered.)";
    };
    nodelocaldns = {
      enable = opt {
        type = t.bool; default = true; scope = "cluster"; kubespray = "enable_nodelocaldns";
        description = "Run the nodelocaldns cache on every node; kubelet and resolv.conf then use dns.nodelocaldns.ip.";
      };
      ip = opt {
        type = t.ipv4; default = "169.254.25.10"; scope = "cluster"; kubespray = "nodelocaldns_ip";
        description = "Link-local address nodelocaldns listens on.";
      };
      healthPort = opt {
        type = t.port; default = 9254; scope = "cluster"; kubespray = "nodelocaldns_health_port";
        description = "Health port of nodelocaldns.";
      };
    };
    coredns = {
      version = opt {
        type = t.nullOr t.version; default = null; scope = "cluster"; kubespray = "coredns_version";
        description = "CoreDNS version, the image <kubernetes.imageRepo>/coredns/coredns:v<version> (null: the one pinned for the Kubernetes minor version).";
      };
      replicas = opt {
        type = t.int; default = 2; scope = "cluster"; kubespray = "coredns_replicas";
        description = "CoreDNS replicas (when the DNS autoscaler is off).";
      };
      memoryLimit = opt {
        type = t.quantity; default = "300Mi"; scope = "cluster"; kubespray = "dns_memory_limit";
        description = "CoreDNS memory limit.";
      };
    };
    autoscaler.enable = opt {
      type = t.bool; default = true; scope = "cluster"; kubespray = "enable_dns_autoscaler";
      description = "Scale CoreDNS with the cluster-proportional-autoscaler.";
    };
  };

  addons = {
    metricsServer = {
      enable = opt {
        type = t.bool; default = false; scope = "cluster"; kubespray = "metrics_server_enabled";
        description = "Deploy metrics-server.";
      };
      kubeletInsecureTLS = opt {
        type = t.bool; default = true; scope = "cluster"; kubespray = "metrics_server_kubelet_insecure_tls";
        description = "--kubelet-insecure-tls for metrics-server.";
      };
      replicas = opt {
        type = t.int; default = 1; scope = "cluster"; kubespray = "metrics_server_replicas";
        description = "metrics-server replicas.";
      };
      metricResolution = opt {
        type = t.duration; default = "15s"; scope = "cluster"; kubespray = "metrics_server_metric_resolution";
        description = "--metric-resolution.";
      };
    };
  };
}
