# metrics-server manifests as data (Kubespray's kubernetes-apps/metrics_server):
# RBAC, Service, Deployment and the v1beta1.metrics.k8s.io APIService.
# Returns { "<file>" = yaml; } for /etc/kubernetes/addons/metrics_server/.
let
  lib = import ../lib;
  inherit (lib) yaml text;
  labels = { "app.kubernetes.io/name" = "metrics-server"; };
  meta = name: { inherit name labels; namespace = "kube-system"; };
  rbac = "rbac.authorization.k8s.io";
  crb = name: role: {
    apiVersion = "${rbac}/v1";
    kind = "ClusterRoleBinding";
    metadata = { inherit name labels; };
    roleRef = { apiGroup = rbac; kind = "ClusterRole"; name = role; };
    subjects = [{ kind = "ServiceAccount"; name = "metrics-server"; namespace = "kube-system"; }];
  };
in
{
  manifests = { ctx }:
    let
      s = ctx.settings;
      m = s.addons.metricsServer;
    in
    {
      "metrics-server-sa.yaml" = yaml.toYAML { apiVersion = "v1"; kind = "ServiceAccount"; metadata = meta "metrics-server"; };
      "resource-reader.yaml" = yaml.documents [
        {
          apiVersion = "${rbac}/v1";
          kind = "ClusterRole";
          metadata = { name = "system:metrics-server"; inherit labels; };
          rules = [
            { apiGroups = [ "" ]; resources = [ "nodes/metrics" ]; verbs = [ "get" ]; }
            { apiGroups = [ "" ]; resources = [ "pods" "nodes" ]; verbs = [ "get" "list" "watch" ]; }
          ];
        }
        {
          apiVersion = "${rbac}/v1";
          kind = "ClusterRole";
          metadata = {
            name = "system:aggregated-metrics-reader";
            labels = labels // {
              "rbac.authorization.k8s.io/aggregate-to-admin" = "true";
              "rbac.authorization.k8s.io/aggregate-to-edit" = "true";
              "rbac.authorization.k8s.io/aggregate-to-view" = "true";
            };
          };
          rules = [{ apiGroups = [ "metrics.k8s.io" ]; resources = [ "pods" "nodes" ]; verbs = [ "get" "list" "watch" ]; }];
        }
      ];
      "resource-reader-clusterrolebinding.yaml" = yaml.toYAML (crb "system:metrics-server" "system:metrics-server");
      "auth-delegator.yaml" = yaml.toYAML (crb "metrics-server:system:auth-delegator" "system:auth-delegator");
      "auth-reader.yaml" = yaml.toYAML {
        apiVersion = "${rbac}/v1";
        kind = "RoleBinding";
        metadata = meta "metrics-server-auth-reader";
        roleRef = { apiGroup = rbac; kind = "Role"; name = "extension-apiserver-authentication-reader"; };
        subjects = [{ kind = "ServiceAccount"; name = "metrics-server"; namespace = "kube-system"; }];
      };
      "metrics-server-service.yaml" = yaml.toYAML {
        apiVersion = "v1";
        kind = "Service";
        metadata = meta "metrics-server";
        spec = { selector = labels; ports = [{ name = "https"; port = 443; protocol = "TCP"; targetPort = "https"; }]; };
      };
      "metrics-server-deployment.yaml" = yaml.toYAML {
        apiVersion = "apps/v1";
        kind = "Deployment";
        metadata = meta "metrics-server";
        spec = {
          replicas = m.replicas;
          selector.matchLabels = labels;
          strategy.rollingUpdate.maxUnavailable = 0;
          template = {
            metadata.labels = labels;
            spec = {
              serviceAccountName = "metrics-server";
              priorityClassName = "system-cluster-critical";
              nodeSelector."kubernetes.io/os" = "linux";
              containers = [{
                name = "metrics-server";
                image = ctx.images.metricsServer;
                imagePullPolicy = s.kubernetes.imagePullPolicy;
                args = [
                  "--cert-dir=/tmp"
                  "--secure-port=10250"
                  "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname"
                  "--kubelet-use-node-status-port"
                  "--metric-resolution=${m.metricResolution}"
                ] ++ text.optional m.kubeletInsecureTLS "--kubelet-insecure-tls";
                ports = [{ name = "https"; containerPort = 10250; protocol = "TCP"; }];
                resources = { limits = { cpu = "100m"; memory = "200Mi"; }; requests = { cpu = "100m"; memory = "200Mi"; }; };
                livenessProbe = { httpGet = { path = "/livez"; port = "https"; scheme = "HTTPS"; }; periodSeconds = 10; failureThreshold = 3; };
                readinessProbe = { httpGet = { path = "/readyz"; port = "https"; scheme = "HTTPS"; }; initialDelaySeconds = 20; periodSeconds = 10; failureThreshold = 3; };
                securityContext = {
                  allowPrivilegeEscalation = false;
                  capabilities.drop = [ "ALL" ];
                  readOnlyRootFilesystem = true;
                  runAsNonRoot = true;
                  runAsUser = 1000;
                  seccompProfile.type = "RuntimeDefault";
                };
                volumeMounts = [{ name = "tmp-dir"; mountPath = "/tmp"; }];
              }];
              volumes = [{ name = "tmp-dir"; emptyDir = { }; }];
            };
          };
        };
      };
      "metrics-apiservice.yaml" = yaml.toYAML {
        apiVersion = "apiregistration.k8s.io/v1";
        kind = "APIService";
        metadata = { name = "v1beta1.metrics.k8s.io"; inherit labels; };
        spec = {
          service = { name = "metrics-server"; namespace = "kube-system"; };
          group = "metrics.k8s.io";
          version = "v1beta1";
          insecureSkipTLSVerify = true;
          groupPriorityMinimum = 100;
          versionPriority = 100;
        };
      };
    };
}
