# Options about reaching and preparing a node: SSH access, preinstall (sysctl, swap,
# /etc/hosts), paths and HTTP proxy (Kubespray's inventory vars and preinstall role).
{ opt, t, versions, ... }:
{
  arch = opt {
    type = t.enum [ "amd64" "arm64" ]; default = "amd64"; kubespray = "host_architecture";
    example = "arm64";
    description = "The node's CPU architecture: selects the download URL and checksum of every binary it gets (a cluster may mix architectures; images are multi-arch). Kubespray detects it; kdeploy never asks the node before it plans, so set it per node.";
  };

  ssh = {
    user = opt {
      type = t.nullOr t.userName; default = null; kubespray = "ansible_user";
      example = "ubuntu";
      description = "SSH login user (null: the User that ~/.ssh/config gives for the node's address, else root). A user other than root runs everything through ssh.become.";
    };
    port = opt {
      type = t.nullOr t.port; default = null; kubespray = "ansible_port";
      description = "SSH port (null: ~/.ssh/config's Port for the node's address, else 22).";
    };
    become = opt {
      type = t.enum [ "sudo" "doas" "none" ]; default = "sudo"; kubespray = "ansible_become_method";
      description = "How a login other than root becomes root for everything kdeploy does on the node (lock, uploads, activation, hooks): \"sudo\" runs each command with `sudo -n`, \"doas\" with `doas -n` (both must be passwordless), \"none\" runs as the login user (one that is root already). Ignored when logging in as root.";
    };
    key = opt {
      type = t.nullOr t.deployerPath; default = null; kubespray = "ansible_ssh_private_key_file";
      description = "Private key file on the deployer (null: ~/.ssh/config's IdentityFile, else the ssh-agent, else ~/.ssh/id_ed25519, id_ecdsa or id_rsa). An encrypted key's passphrase is asked once on the terminal.";
    };
    jumpHost = opt {
      type = t.nullOr (t.strMatching "user@host:port" "[A-Za-z_][-A-Za-z0-9_.]*@[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?:[0-9]+"); default = null; kubespray = "bastion host";
      description = "Bastion to connect through, as \"user@host:port\" (null: ~/.ssh/config's ProxyJump for the node's address, if any).";
    };
  };

  preinstall = {
    sysctlFile = opt {
      type = t.absPath; default = "/etc/sysctl.d/99-sysctl.conf"; kubespray = "sysctl_file_path";
      description = "File that receives kdeploy's sysctl settings.";
    };
    additionalSysctl = opt {
      type = t.attrsWithNames t.sysctlKey (t.oneOf [ t.line t.int ]); default = { }; kubespray = "additional_sysctl";
      example = { "kernel.pid_max" = 131072; };
      description = "Extra sysctl settings.";
    };
    manageEtcHosts = opt {
      type = t.bool; default = true; kubespray = "populate_inventory_to_hosts_file";
      description = "Write /etc/hosts with localhost entries and every cluster node (<address> <name>.<dns.domain> <name>). The whole file is managed.";
    };
    etcHostsExtra = opt {
      type = t.listOf t.line; default = [ ];
      example = [ "10.0.0.5 registry.example.com" ];
      description = "Extra lines for /etc/hosts.";
    };
  };

  paths.binDir = opt {
    type = t.absPath; default = "/usr/local/bin"; scope = "cluster"; kubespray = "bin_dir";
    description = "Where binaries are installed.";
  };

  proxy = {
    http = opt {
      type = t.nullOr t.url; default = null; scope = "cluster"; kubespray = "http_proxy";
      description = "HTTP proxy for containerd (systemd drop-in), and for the deployer's http:// downloads (https:// too when proxy.https is unset) when its environment names no proxy.";
    };
    https = opt {
      type = t.nullOr t.url; default = null; scope = "cluster"; kubespray = "https_proxy";
      description = "HTTPS proxy for containerd, and for the deployer's https:// downloads when its environment names no proxy (http_proxy, https_proxy, all_proxy and their upper-case forms win).";
    };
    noProxy = opt {
      type = t.nullOr t.noProxy; default = null; scope = "cluster"; kubespray = "no_proxy";
      description = "NO_PROXY for containerd (null with a proxy set: node addresses, service and pod networks, localhost); the deployer's downloads skip the proxy for its hosts and .domains.";
    };
  };
}
