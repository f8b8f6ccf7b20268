#!/usr/bin/env python3
"""Check the component configurations the stdlib generates against the upstream Go types.

Usage: component-configs.py CLOSURE.json...   (the output of `kdeploy eval --json`)

kubeadm (kubeadm.k8s.io), kubelet (kubelet.config.k8s.io), kube-proxy
(kubeproxy.config.k8s.io) and kube-scheduler (kubescheduler.config.k8s.io) read
configuration files that are not Kubernetes API objects, so the OpenAPI schemas
that tests/stdlib/k8s-schemas.py uses do not cover them. component-schemas.json
(made by gen-component-schemas.py from the upstream Go structs) lists the JSON
fields of every type and their kinds; this checks every such document of every
generated file recursively, as the components decode them (strictly: a field
the Go type lacks is an error, field names are case-sensitive):
  - a field the type lacks, or a duplicate key, is an error naming its path;
  - a value of the wrong kind (string, int, bool, float, list, map/object) is an error;
  - an apiVersion/kind of these groups that the data does not have is an error.
Before the real run, two copies of a generated document, one with an unknown field
and one with a value of the wrong kind, must both be rejected, so a checker that
accepts anything fails this test.
"""
import copy
import datetime
import json
import os
import sys

import yaml

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "component-schemas.json")
COMPONENT_GROUPS = {
    "kubeadm.k8s.io",
    "kubelet.config.k8s.io",
    "kubeproxy.config.k8s.io",
    "kubescheduler.config.k8s.io",
}


class StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, but a duplicate mapping key is an error (as for the components)."""


def _mapping(loader, node, deep=False):
    keys = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in keys:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        keys.add(key)
    return loader.construct_mapping(node, deep)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def component_group(doc):
    return isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str) \
        and doc["apiVersion"].split("/")[0] in COMPONENT_GROUPS


def documents(closure):
    """(node, phase, path, doc or parse error) of every component document in generated files."""
    for node, n in sorted(closure["nodes"].items()):
        for phase in n["phases"]:
            for f in phase["files"]:
                text = f["source"].get("text")
                if not text or not any(g in text for g in COMPONENT_GROUPS):
                    continue
                try:
                    docs = list(yaml.load_all(text, Loader=StrictLoader))
                except yaml.YAMLError as e:
                    yield node, phase["name"], f["path"], f"not YAML: {e}"
                    continue
                for doc in docs:
                    if component_group(doc):
                        yield node, phase["name"], f["path"], doc


def type_name(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, (str, datetime.date)):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


def describe(kind):
    if isinstance(kind, str):
        return kind
    if "list" in kind:
        return f"list of {describe(kind['list'])}"
    if "map" in kind:
        return f"map of {describe(kind['map'])}"
    return f"object {kind['struct']}"


class Checker:
    def __init__(self, schemas):
        self.types = schemas["types"]
        self.roots = schemas["roots"]

    def root(self, doc):
        """The kind of a document's apiVersion/kind, or None."""
        name = self.roots.get(doc.get("apiVersion"), {}).get(doc.get("kind"))
        return {"struct": name} if name else None

    def check_doc(self, doc):
        """Errors of one document: ["path: why", ...]."""
        kind = self.root(doc)
        if kind is None:
            known = ", ".join(f"{v}/{k}" for v, ks in sorted(self.roots.items()) for k in ks)
            return [f"no upstream type for apiVersion {doc.get('apiVersion')!r} kind {doc.get('kind')!r}"
                    f" (known: {known})"]
        errors = []
        self.check(doc, kind, "", errors)
        return errors

    def check(self, value, kind, path, errors):
        """Check one value against a kind; append "path: why" to errors."""
        got = type_name(value)
        if value is None or kind == "any":
            return  # Go's JSON decoding leaves a field alone on null
        where = path or "(document)"
        if isinstance(kind, str):
            ok = {
                "string": got == "string",
                "int": got == "int",
                "bool": got == "bool",
                "float": got in ("int", "float"),
                "int-or-string": got in ("int", "string"),
            }.get(kind)
            if ok is None:
                errors.append(f"{where}: the data has an unknown kind {kind!r}")
            elif not ok:
                errors.append(f"{where}: {got} {value!r} where the upstream type has {kind}")
            return
        if "list" in kind:
            if got != "list":
                errors.append(f"{where}: {got} where the upstream type has {describe(kind)}")
                return
            for i, item in enumerate(value):
                self.check(item, kind["list"], f"{path}[{i}]", errors)
            return
        if "map" in kind:
            if got != "map":
                errors.append(f"{where}: {got} where the upstream type has {describe(kind)}")
                return
            for key, item in value.items():
                self.check(item, kind["map"], f"{path}[{json.dumps(str(key))}]", errors)
            return
        fields = self.types[kind["struct"]]["fields"]
        if got != "map":
            errors.append(f"{where}: {got} where the upstream type has {describe(kind)}")
            return
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            if not isinstance(key, str) or key not in fields:
                errors.append(f"{sub}: unknown field: {kind['struct']} has no field {key!r}")
                continue
            self.check(item, fields[key], sub, errors)


def scalar_leaf(checker, value, kind, path=()):
    """A path to a string/int/bool field set in a document, to give a value of another kind."""
    if isinstance(kind, dict) and "struct" in kind and isinstance(value, dict):
        fields = checker.types[kind["struct"]]["fields"]
        for key in sorted(value, key=lambda k: (isinstance(value[k], dict), str(k))):
            if key in ("apiVersion", "kind") or key not in fields:
                continue
            found = scalar_leaf(checker, value[key], fields[key], path + (key,))
            if found:
                return found
    elif kind in ("string", "int", "bool") and value is not None:
        return path, kind
    return None


def controls(checker, doc):
    """Errors if the checker accepts a document it must reject."""
    failures = []
    bad = copy.deepcopy(doc)
    bad["notAField"] = "x"
    if not checker.check_doc(bad):
        failures.append("a copy with an unknown field notAField was accepted")
    found = scalar_leaf(checker, doc, checker.root(doc))
    if found is None:
        failures.append("no string/int/bool field in the first document to give a wrong kind")
    else:
        path, kind = found
        bad = copy.deepcopy(doc)
        target = bad
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = {"string": 12345, "int": "12345", "bool": "true"}[kind]
        if not checker.check_doc(bad):
            failures.append(f"a copy with {'.'.join(path)} of the wrong kind was accepted")
    return failures


def main(files):
    if not files:
        print(__doc__)
        return 2
    schemas = json.load(open(SCHEMAS))
    checker = Checker(schemas)
    checked, invalid, kinds = 0, 0, set()
    for name in files:
        closure = json.load(open(name))
        docs = list(documents(closure))
        first = next((d for _, _, _, d in docs if isinstance(d, dict) and checker.root(d)), None)
        if first is None:
            print(f"FAIL {name}: no component configuration documents found")
            return 1
        failures = controls(checker, first)
        if failures:
            for f in failures:
                print(f"FAIL {name}: control: {f}; the checker is not strict")
            return 1
        for node, phase, path, doc in docs:
            checked += 1
            if isinstance(doc, str):
                invalid += 1
                print(f"FAIL {name} {node} {phase} {path}: {doc}")
                continue
            kinds.add(f"{doc.get('apiVersion')}/{doc.get('kind')}")
            errors = checker.check_doc(doc)
            if errors:
                invalid += 1
                for e in errors:
                    print(f"FAIL {name} {node} {phase} {path}: {doc.get('kind')}: {e}")
    print(f"{checked} documents of {len(kinds)} kinds checked against the upstream Go types "
          f"({schemas['upstream']}), {invalid} invalid")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
