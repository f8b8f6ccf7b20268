# Phase "preinstall" (Kubespray roles kubernetes/preinstall and the sysctl/module parts
# of kubernetes/node): sysctl settings, kernel modules, swap off, the Kubernetes and CNI
# directories, /etc/hosts with every cluster node, the /etc/kubernetes/pki link.
ctx: group:
let
  lib = import ../lib;
  inherit (lib) records text;
  inherit (builtins) attrNames map concatMap elem;
  s = group.settings;
  cs = ctx.settings;
  k8s = group.isK8s;
  plugin = cs.network.plugin;
  ipvs = cs.kubeProxy.mode == "ipvs" && !cs.kubeProxy.remove;
  nodelocaldns = cs.dns.nodelocaldns.enable && cs.dns.mode != "none";

  # "-" prefix: systemd-sysctl skips keys the kernel does not have.
  sysctl =
    [ "net.ipv4.ip_forward = 1" ]
    ++ text.optionals s.kubelet.protectKernelDefaults [
      "kernel.keys.root_maxbytes = 25000000"
      "kernel.keys.root_maxkeys = 1000000"
      "kernel.panic = 10"
      "kernel.panic_on_oops = 1"
      "vm.overcommit_memory = 1"
      "vm.panic_on_oom = 0"
    ]
    ++ [
      "fs.inotify.max_user_instances = 8192"
      "-fs.may_detach_mounts = 1"
    ]
    ++ text.optionals k8s [
      "net.ipv4.ip_local_reserved_ports = ${cs.apiserver.nodePortRange}"
      "-net.bridge.bridge-nf-call-iptables = 1"
      "-net.bridge.bridge-nf-call-arptables = 1"
      "-net.bridge.bridge-nf-call-ip6tables = 1"
    ]
    ++ map (k: "${k} = ${toString s.preinstall.additionalSysctl.${k}}") (attrNames s.preinstall.additionalSysctl);

  # Kernel modules to load at boot (one file each, as Ansible's modprobe `persistent` does).
  modules =
    text.optionals k8s [ { file = "kubespray-br_netfilter.conf"; name = "br_netfilter"; } ]
    ++ text.optionals (k8s && ipvs) (map (m: { file = "${m}.conf"; name = m; })
      [ "ip_vs" "ip_vs_rr" "ip_vs_wrr" "ip_vs_sh" "ip_vs_wlc" "ip_vs_lc" "nf_conntrack" ])
    ++ text.optionals (k8s && cs.kubeProxy.mode == "nftables" && !cs.kubeProxy.remove) [ { file = "nf_tables.conf"; name = "nf_tables"; } ]
    ++ text.optionals (k8s && nodelocaldns) [ { file = "dummy.conf"; name = "dummy"; } ];

  kubeDirs = [
    "/etc/kubernetes"
    "/etc/kubernetes/manifests"
    "${cs.paths.binDir}/kubernetes-scripts"
    "/usr/libexec/kubernetes/kubelet-plugins/volume/exec"
    "/etc/kubernetes/ssl"
    "/var/lib/cni"
  ];
  cniDirs = text.optionals (elem plugin [ "calico" "flannel" "cni" ]) [ "/etc/cni/net.d" "/opt/cni/bin" ]
    ++ text.optionals (plugin == "calico") [ "/var/lib/calico" ];
in
{
  directories = map (path: records.directory { inherit path; })
    ([ cs.paths.binDir ] ++ text.optionals k8s (kubeDirs ++ cniDirs));

  files =
    [ (records.textFile s.preinstall.sysctlFile (text.lines ([ "# Managed by kdeploy (preinstall)." ] ++ sysctl))) ]
    ++ map (m: records.textFile "/etc/modules-load.d/${m.file}" "${m.name}\n") modules
    ++ text.optional (k8s && nodelocaldns) (records.textFile "/etc/modprobe.d/dummy.conf" "options dummy numdummies=0\n")
    ++ text.optional s.preinstall.manageEtcHosts (records.textFile "/etc/hosts" ctx.texts.etcHosts);

  hooks =
    text.optionals s.kubelet.failSwapOn [
      (records.hook {
        name = "swap-off";
        run = "swapoff -a";
        # the swap /etc/fstab names comes back (a swap turned on by hand does not)
        undo = "swapon -a";
        unless = "test \"$(wc -l < /proc/swaps)\" -le 1";
      })
      (records.hook {
        name = "mask-swap-target";
        run = "systemctl mask swap.target";
        undo = "systemctl unmask swap.target";
        unless = "test \"$(systemctl is-enabled swap.target 2>/dev/null)\" = masked";
      })
    ]
    ++ text.optional (modules != [ ]) (records.hook {
      # In containers (no CAP_SYS_MODULE) systemd skips this unit by its own condition.
      name = "load-kernel-modules";
      run = "systemctl restart systemd-modules-load.service";
      undo.nothing = "loads kernel modules (until reboot) from a managed file, which reset removes";
    })
    ++ [
      (records.hook {
        name = "apply-sysctl";
        run = "systemctl restart systemd-sysctl.service";
        undo.nothing = "sets kernel values (until reboot) from a managed file, which reset removes";
      })
    ]
    ++ text.optional k8s (records.hook {
      name = "kubeadm-pki-link";
      run = "ln -s /etc/kubernetes/ssl /etc/kubernetes/pki";
      undo = "if [ \"$(readlink /etc/kubernetes/pki)\" = /etc/kubernetes/ssl ]; then rm -f /etc/kubernetes/pki; fi";
      unless = "test -e /etc/kubernetes/pki";
    });
}
