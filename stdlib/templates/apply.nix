# A guarded `kubectl apply` hook for manifests placed by a phase on the first control
# plane. The guard compares a sha256 of the manifests with a marker written after a
# successful apply, so unchanged manifests are not re-applied when something else in
# the phase changes. (A rollback of the phase does not un-apply objects.)
let
  lib = import ../lib;
  inherit (builtins) concatStringsSep map hashString;
  markerDir = "/var/lib/kdeploy-stdlib/applied";
in
{
  inherit markerDir;

  # files: [ { path; text; } ] in apply order; serverSide for big objects such as CRDs.
  hook = { name, files, binDir, serverSide ? false, extraHash ? "" }:
    let
      hash = hashString "sha256" (concatStringsSep "\n" (map (f: f.path + "\n" + (f.text or "")) files) + extraHash);
      kubectl = "${binDir}/kubectl --kubeconfig=/etc/kubernetes/admin.conf";
      flags = if serverSide then " --server-side --force-conflicts" else "";
    in
    lib.records.hook {
      name = "apply-${name}";
      run = lib.text.lines ([ "set -eu" ]
        ++ map (f: "${kubectl} apply${flags} -f ${f.path}") files
        ++ [ "mkdir -p ${markerDir}" "echo ${hash} > ${markerDir}/${name}" ]);
      unless = "test \"$(cat ${markerDir}/${name} 2>/dev/null)\" = ${hash}";
      # the objects live in the cluster's API; the marker of what was applied is the node's
      undo = "rm -f ${markerDir}/${name}; rmdir ${markerDir} ${dirOf markerDir} 2>/dev/null || true";
    };
}
