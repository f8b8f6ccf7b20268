# The localhost API load balancer of nodes without a control plane (Kubespray's
# nginx-proxy / haproxy static pods): config file + static pod manifest. The config is
# the same on every such node, so the context computes it once.
let
  lib = import ../lib;
  inherit (lib) text yaml;
  inherit (builtins) map concatStringsSep hashString;
in
{
  nginxConf = { ctx }:
    let s = ctx.settings; hc = s.loadBalancer.healthcheckPort; in
    text.lines ([
      "# Managed by kdeploy: localhost load balancer to the API servers."
      "error_log stderr notice;"
      ""
      "worker_processes 2;"
      "worker_rlimit_nofile 65535;"
      "worker_shutdown_timeout 10s;"
      ""
      "events {"
      "  multi_accept on;"
      "  use epoll;"
      "  worker_connections 16384;"
      "}"
      ""
      "stream {"
      "  upstream kube_apiserver {"
      "    least_conn;"
    ]
    ++ map (n: "    server ${n.address}:${toString ctx.api.port};") ctx.controlPlanes
    ++ [
      "  }"
      ""
      "  server {"
      "    listen        127.0.0.1:${toString ctx.api.lbPort};"
      "    proxy_pass    kube_apiserver;"
      "    proxy_timeout 10m;"
      "    proxy_connect_timeout 1s;"
      "  }"
      "}"
      ""
      "http {"
      "  aio threads;"
      "  aio_write on;"
      "  tcp_nopush on;"
      "  tcp_nodelay on;"
      "  keepalive_timeout 5m;"
      "  keepalive_requests 100;"
      "  reset_timedout_connection on;"
      "  server_tokens off;"
      "  autoindex off;"
    ]
    ++ text.optionals (hc != null) [
      "  server {"
      "    listen ${toString hc};"
      "    location /healthz {"
      "      access_log off;"
      "      return 200;"
      "    }"
      "  }"
    ]
    ++ [ "}" ]);

  haproxyCfg = { ctx }:
    let s = ctx.settings; hc = s.loadBalancer.healthcheckPort; in
    text.lines ([
      "# Managed by kdeploy: localhost load balancer to the API servers."
      "global"
      "    maxconn 4000"
      "    log 127.0.0.1 local0"
      ""
      "defaults"
      "    mode http"
      "    log global"
      "    option httplog"
      "    option dontlognull"
      "    option http-server-close"
      "    option redispatch"
      "    retries 5"
      "    timeout http-request 5m"
      "    timeout queue 5m"
      "    timeout connect 30s"
      "    timeout client 5m"
      "    timeout server 15m"
      "    timeout http-keep-alive 30s"
      "    timeout check 30s"
      "    maxconn 4000"
      ""
    ]
    ++ text.optionals (hc != null) [
      "frontend healthz"
      "    bind 0.0.0.0:${toString hc}"
      "    mode http"
      "    monitor-uri /healthz"
      ""
    ]
    ++ [
      "frontend kube_api_frontend"
      "    bind 127.0.0.1:${toString ctx.api.lbPort}"
      "    mode tcp"
      "    option tcplog"
      "    default_backend kube_api_backend"
      ""
      "backend kube_api_backend"
      "    mode tcp"
      "    balance leastconn"
      "    default-server inter 15s downinter 15s rise 2 fall 2 slowstart 60s maxconn 1000 maxqueue 256 weight 100"
      "    option httpchk GET /healthz"
      "    http-check expect status 200"
    ]
    ++ map (n: "    server ${n.name} ${n.address}:${toString ctx.api.port} check check-ssl verify none") ctx.controlPlanes);

  # Static pod running the proxy with host networking; the annotation changes with the
  # config so the kubelet recreates the pod when the config changes.
  manifest = { ctx, kind, config }:
    let
      s = ctx.settings;
      nginx = kind == "nginx";
      hc = s.loadBalancer.healthcheckPort;
      probe = { httpGet = { path = "/healthz"; port = hc; }; };
    in
    yaml.toYAML {
      apiVersion = "v1";
      kind = "Pod";
      metadata = {
        name = if nginx then "nginx-proxy" else "haproxy";
        namespace = "kube-system";
        labels = {
          "addonmanager.kubernetes.io/mode" = "Reconcile";
          "k8s-app" = if nginx then "kube-nginx" else "kube-haproxy";
        };
        annotations."${kind}-cfg-checksum" = hashString "sha1" config;
      };
      spec = {
        hostNetwork = true;
        dnsPolicy = "ClusterFirstWithHostNet";
        nodeSelector."kubernetes.io/os" = "linux";
        priorityClassName = "system-node-critical";
        containers = [
          ({
            name = if nginx then "nginx-proxy" else "haproxy";
            image = if nginx then ctx.images.nginx else ctx.images.haproxy;
            imagePullPolicy = s.kubernetes.imagePullPolicy;
            resources.requests = { cpu = "25m"; memory = "32M"; };
            # The config is a kdeploy symlink into /var/lib/kdeploy: mounted too.
            volumeMounts = [
              {
                mountPath = if nginx then "/etc/nginx" else "/usr/local/etc/haproxy/";
                name = if nginx then "etc-nginx" else "etc-haproxy";
                readOnly = true;
              }
              { mountPath = "/var/lib/kdeploy"; name = "kdeploy-managed-files"; readOnly = true; }
            ];
          } // (if hc != null then { livenessProbe = probe; readinessProbe = probe; } else { }))
        ];
        volumes = [
          {
            name = if nginx then "etc-nginx" else "etc-haproxy";
            hostPath.path = if nginx then "/etc/nginx" else "/etc/haproxy";
          }
          { name = "kdeploy-managed-files"; hostPath = { path = "/var/lib/kdeploy"; type = "Directory"; }; }
        ];
      };
    };
}
