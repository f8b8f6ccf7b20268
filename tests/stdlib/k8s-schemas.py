#!/usr/bin/env python3
"""Validate every Kubernetes object the stdlib generates against the real
OpenAPI schemas of the cluster's pinned Kubernetes version (the PyPI package
kubernetes-validate ships them, strict: unknown fields are errors).

Usage: k8s-schemas.py CLOSURE.json...   (the output of `kdeploy eval --json`)

Objects of API groups (Pods, DaemonSets, Deployments, RBAC, Services,
ConfigMaps, APIServices...) are validated; component configurations
(kubeadm, kubelet, kube-proxy, kube-scheduler) are not Kubernetes API objects
and have no OpenAPI schema: tests/stdlib/component-configs.py checks those.
Before the real run, a copy of a generated object with one unknown field
must be rejected, so a validator that accepts anything fails this test.
"""
import copy
import json
import sys

import kubernetes_validate
import yaml

COMPONENT_GROUPS = {
    "kubeadm.k8s.io",
    "kubelet.config.k8s.io",
    "kubeproxy.config.k8s.io",
    "kubescheduler.config.k8s.io",
}


def objects(closure):
    """(node, phase, path, object) for every YAML object with a kind."""
    for node, n in sorted(closure["nodes"].items()):
        for phase in n["phases"]:
            for f in phase["files"]:
                text = f["source"].get("text")
                if not text or "apiVersion" not in text or not f["path"].endswith((".yml", ".yaml", ".conf")):
                    continue
                for doc in yaml.safe_load_all(text):
                    if isinstance(doc, dict) and "kind" in doc:
                        yield node, phase["name"], f["path"], doc


def is_component_config(doc):
    return doc.get("apiVersion", "").split("/")[0] in COMPONENT_GROUPS


def validate(doc, version):
    """None if valid, else the first error."""
    try:
        kubernetes_validate.validate(doc, version, strict=True)
        return None
    except kubernetes_validate.ValidationError as e:
        return f"{'.'.join(str(p) for p in e.path)}: {e.message}"
    except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as e:
        return f"no schema: {e}"


def main(files):
    seen = set()
    checked, failed, kinds = 0, 0, set()
    for name in files:
        closure = json.load(open(name))
        version = closure["settings"]["kubernetes"]["version"]
        docs = [(n, p, path, d) for n, p, path, d in objects(closure) if not is_component_config(d)]
        if not docs:
            print(f"FAIL {name}: no Kubernetes objects found")
            return 1
        # the control: one unknown field must be an error
        bad = copy.deepcopy(docs[0][3])
        bad.setdefault("metadata", {})["notAField"] = "x"
        if validate(bad, version) is None:
            print(f"FAIL {name}: an unknown field was accepted; the validator is not strict")
            return 1
        for node, phase, path, doc in docs:
            key = (version, json.dumps(doc, sort_keys=True))
            if key in seen:
                continue
            seen.add(key)
            checked += 1
            kinds.add(f"{doc['apiVersion']}/{doc['kind']}")
            err = validate(doc, version)
            if err:
                failed += 1
                print(f"FAIL {name} {node} {phase} {path}: {doc['kind']} {doc.get('metadata', {}).get('name')}: {err}")
    print(f"{checked} distinct objects of {len(kinds)} kinds validated against the Kubernetes schemas, {failed} invalid")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
