# Every download from a mirror: files from a files_repo, images from one registry with
# Kubespray's offline layout (kube_image_repo, docker_image_repo, quay_image_repo all
# pointing at it); `arm` is an arm64 worker. `plugin` picks the network plugin.
{ plugin ? "calico" }:
let kd = import <kdeploy>; in
kd.cluster {
  name = "mirrored";
  nodes = {
    cp = { address = "10.1.0.11"; roles = [ "control-plane" "etcd" ]; };
    amd = { address = "10.1.0.21"; roles = [ "worker" ]; };
    arm = { address = "10.1.0.22"; roles = [ "worker" ]; settings.arch = "arm64"; };
  };
  settings = {
    kubernetes.version = "1.33.5";
    network.plugin = plugin;
    loadBalancer.localhost = true;
    addons.metricsServer.enable = true;
    dns.nodelocaldns.enable = true;
    dns.autoscaler.enable = true;
    download.filesRepo = "http://mirror.internal:8080/files";
    kubernetes.imageRepo = "registry.internal:5000/k8s";
    download.dockerImageRepo = "registry.internal:5000/docker";
    download.quayImageRepo = "registry.internal:5000/quay";
  };
}
