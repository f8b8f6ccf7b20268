# containerd files: config.toml in the schema of the deployed version (version = 2 for
# containerd 1.x, 3 for 2.0-2.2, 4 from 2.3; plugin names differ between them),
# hosts.toml per registry, the systemd unit and the proxy drop-in.
let
  lib = import ../lib;
  inherit (lib) text;
  inherit (builtins) toJSON concatStringsSep map attrNames;
  q = toJSON; # TOML basic strings accept JSON string escapes
  b = text.boolStr;
  atLeast = lib.version.atLeast;
in
{
  # Which config.toml schema a containerd version reads.
  schemaFor = version:
    if atLeast version "2.3.0" then 4
    else if atLeast version "2.0.0" then 3
    else 2;

  configToml = { s, ctx, binDir }:
    let
      c = s.containerd;
      v = c.version;
      schema = if atLeast v "2.3.0" then 4 else if atLeast v "2.0.0" then 3 else 2;
      cri = if schema == 2 then "io.containerd.grpc.v1.cri" else "io.containerd.cri.v1.runtime";
      runtimes = if schema == 2 then "plugins.\"${cri}\".containerd.runtimes" else "plugins.\"${cri}\".containerd.runtimes";
      runc = [
        "        [${runtimes}.runc]"
        "          runtime_type = \"io.containerd.runc.v2\""
        "          [${runtimes}.runc.options]"
        "            BinaryName = ${q "${binDir}/runc"}"
        "            Root = \"\""
        "            SystemdCgroup = ${b c.systemdCgroup}"
      ];
      common = [
        "root = ${q c.storageDir}"
        "state = ${q c.stateDir}"
        "oom_score = ${toString c.oomScore}"
      ]
      ++ text.optionals (c.extraConfig != "") [ "" c.extraConfig ]
      ++ [
        ""
        "[grpc]"
        "  max_recv_message_size = 16777216"
        "  max_send_message_size = 16777216"
        ""
        "[debug]"
        "  level = ${q c.debugLevel}"
        ""
        "[metrics]"
        "  address = \"\""
        "  grpc_histogram = false"
        ""
        "[plugins]"
      ];
      criCommon = [
        "    max_container_log_line_size = ${toString c.maxContainerLogLineSize}"
        "    enable_unprivileged_ports = ${b c.enableUnprivilegedPorts}"
        "    enable_unprivileged_icmp = ${b c.enableUnprivilegedIcmp}"
      ] ++ text.optional c.restrictOomScoreAdj "    restrict_oom_score_adj = true" ++ [
        "    enable_selinux = false"
        "    disable_apparmor = false"
        "    tolerate_missing_hugetlb_controller = true"
        "    disable_hugetlb_controller = true"
      ];
      cdi = text.optionals c.enableCdi [
        "    enable_cdi = true"
        "    cdi_spec_dirs = [\"/etc/cdi\", \"/var/run/cdi\"]"
      ];

      # containerd 1.x: one CRI plugin "io.containerd.grpc.v1.cri".
      v2 = [ "  [plugins.\"${cri}\"]" "    sandbox_image = ${q ctx.images.pause}" ]
        ++ criCommon
        ++ text.optional (atLeast v "1.7.0") "    image_pull_progress_timeout = ${q c.imagePullProgressTimeout}"
        ++ text.optionals (atLeast v "1.7.0") cdi
        ++ [
          "    [plugins.\"${cri}\".containerd]"
          "      default_runtime_name = ${q c.defaultRuntime}"
          "      snapshotter = ${q c.snapshotter}"
          "      discard_unpacked_layers = ${b c.discardUnpackedLayers}"
          "      [${runtimes}]"
        ]
        ++ runc
        ++ [
          "    [plugins.\"${cri}\".registry]"
          "      config_path = ${q "/etc/containerd/certs.d"}"
        ]
        ++ text.optionals (atLeast v "1.7.0") [ "" "  [plugins.\"io.containerd.nri.v1.nri\"]" "    disable = false" ];

      # containerd 2.x: runtime and image CRI plugins are separate.
      v3 = [ "  [plugins.\"${cri}\"]" ]
        ++ criCommon ++ cdi
        ++ [
          "    [plugins.\"${cri}\".containerd]"
          "      default_runtime_name = ${q c.defaultRuntime}"
          "      [${runtimes}]"
        ]
        ++ runc
        ++ [
          ""
          "  [plugins.\"io.containerd.cri.v1.images\"]"
          "    snapshotter = ${q c.snapshotter}"
        ]
        ++ text.optional (c.discardUnpackedLayers && !(atLeast v "2.1.0")) "    discard_unpacked_layers = true"
        ++ [
          "    image_pull_progress_timeout = ${q c.imagePullProgressTimeout}"
          "    [plugins.\"io.containerd.cri.v1.images\".pinned_images]"
          "      sandbox = ${q ctx.images.pause}"
          "    [plugins.\"io.containerd.cri.v1.images\".registry]"
          "      config_path = ${q "/etc/containerd/certs.d"}"
          ""
          "  [plugins.\"io.containerd.nri.v1.nri\"]"
          "    disable = false"
        ];
    in
    {
      inherit schema;
      text = text.lines ([
        "# Managed by kdeploy: containerd ${v} (config schema version ${toString schema})."
        "version = ${toString schema}"
        ""
      ] ++ common ++ (if schema == 2 then v2 else v3));
    };

  # /etc/containerd/certs.d/<prefix>/hosts.toml
  hostsToml = prefix: mirrors:
    text.lines ([ "server = ${q "https://${prefix}"}" ]
      ++ builtins.concatMap
        (m: [
          ""
          "[host.${q m.host}]"
          "  capabilities = [${concatStringsSep ", " (map q m.capabilities)}]"
          "  skip_verify = ${b m.skipVerify}"
          "  override_path = ${b m.overridePath}"
        ])
        mirrors);

  unit = { s, binDir }: text.lines [
    "[Unit]"
    "Description=containerd container runtime (managed by kdeploy)"
    "Documentation=https://containerd.io"
    "After=network.target local-fs.target dbus.service"
    ""
    "[Service]"
    "ExecStartPre=-/sbin/modprobe overlay"
    "ExecStart=${binDir}/containerd"
    "Type=notify"
    "Delegate=yes"
    "KillMode=process"
    "Restart=always"
    "RestartSec=5"
    "LimitNPROC=infinity"
    "LimitCORE=infinity"
    "LimitNOFILE=${toString s.containerd.limitNofile}"
    "LimitMEMLOCK=infinity"
    "TasksMax=infinity"
    "OOMScoreAdjust=-999"
    ""
    "[Install]"
    "WantedBy=multi-user.target"
  ];

  proxyDropIn = { http, https, noProxy }: text.lines ([ "[Service]" ]
    ++ text.optional (http != null) "Environment=\"HTTP_PROXY=${http}\""
    ++ text.optional (https != null) "Environment=\"HTTPS_PROXY=${https}\""
    ++ [ "Environment=\"NO_PROXY=${noProxy}\"" ]);

  crictlYaml = socket: text.lines [
    "runtime-endpoint: ${socket}"
    "image-endpoint: ${socket}"
    "timeout: 30"
    "debug: false"
  ];
}
