#!/usr/bin/env python3
"""Regenerate tests/stdlib/component-schemas.json from the upstream Go types.

Usage: gen-component-schemas.py [-o OUT] SRC_DIR...

The component configurations kubeadm, the kubelet, kube-proxy and kube-scheduler
read (kubeadm.k8s.io, kubelet.config.k8s.io, kubeproxy.config.k8s.io,
kubescheduler.config.k8s.io) are not Kubernetes API objects: the OpenAPI schemas
do not describe them, their Go structs are the definition. This reads those
structs and writes, for every type reachable from the roots below, its JSON
fields and their kinds; tests/stdlib/component-configs.py checks the generated
configurations against that file. The tests have no network, so the file is
committed; rerun this when the pinned Kubernetes version moves.

Each SRC_DIR is one upstream Go module, either
  - a git repository (bare or not), optionally with @REV (default HEAD), e.g. a
    clone of k8s.io/kubelet: .../kubelet.git@v0.33.5, or
  - a plain directory holding the module's go.mod and the package files, with a
    file UPSTREAM-REF naming the commit or tag they were taken from (its first
    word; any further text is kept as a note).
The module path comes from go.mod; the packages below are looked up in the module
whose path prefixes theirs. For Kubernetes v1.X.Y the staging modules
(k8s.io/kubelet, k8s.io/kube-proxy, k8s.io/kube-scheduler, k8s.io/component-base)
are tagged v0.X.Y; kubeadm's types live in k8s.io/kubernetes (tag v1.X.Y):
  gen-component-schemas.py kubelet.git@v0.33.5 kube-proxy.git@v0.33.5 \
      kube-scheduler.git@v0.33.5 component-base.git@v0.33.5 kubernetes.git@v1.33.5
The "sources" of the output name the revision and the files each module gave.

Kinds in the output: "string", "int", "bool", "float", "int-or-string", "any",
{"list": KIND}, {"map": KIND} (JSON object with arbitrary keys) and
{"struct": NAME} (a JSON object whose keys must be the fields of types[NAME]).
Types of packages that are not parsed are "any", except the few well-known ones
in EXTERNAL; types with their own UnmarshalJSON must be listed in CUSTOM_JSON.
"""
import argparse
import json
import os
import re
import subprocess
import sys

# Go package import path -> the short name used in the output.
PACKAGES = {
    "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4": "kubeadm/v1beta4",
    "k8s.io/kubernetes/cmd/kubeadm/app/apis/bootstraptoken/v1": "bootstraptoken/v1",
    "k8s.io/kubelet/config/v1beta1": "kubelet/v1beta1",
    "k8s.io/kube-proxy/config/v1alpha1": "kubeproxy/v1alpha1",
    "k8s.io/kube-scheduler/config/v1": "kubescheduler/v1",
    "k8s.io/component-base/config/v1alpha1": "componentbase/v1alpha1",
    "k8s.io/component-base/logs/api/v1": "logs/v1",
    "k8s.io/component-base/tracing/api/v1": "tracing/v1",
}

# (apiVersion, kind, package): the Go type of each kind has the kind's name
ROOTS = [
    ("kubeadm.k8s.io/v1beta4", "InitConfiguration", "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"),
    ("kubeadm.k8s.io/v1beta4", "ClusterConfiguration", "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"),
    ("kubeadm.k8s.io/v1beta4", "JoinConfiguration", "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"),
    ("kubeadm.k8s.io/v1beta4", "ResetConfiguration", "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"),
    ("kubeadm.k8s.io/v1beta4", "UpgradeConfiguration", "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4"),
    ("kubelet.config.k8s.io/v1beta1", "KubeletConfiguration", "k8s.io/kubelet/config/v1beta1"),
    ("kubeproxy.config.k8s.io/v1alpha1", "KubeProxyConfiguration", "k8s.io/kube-proxy/config/v1alpha1"),
    ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration", "k8s.io/kube-scheduler/config/v1"),
]

META = "k8s.io/apimachinery/pkg/apis/meta/v1"
# Types of packages not parsed whose JSON form is known (anything else there is "any").
EXTERNAL = {
    (META, "TypeMeta"): {"fields": {"apiVersion": "string", "kind": "string"}},
    (META, "Duration"): "string",  # "1m30s"
    (META, "Time"): "string",  # RFC 3339
    ("k8s.io/apimachinery/pkg/api/resource", "Quantity"): "int-or-string",
    ("k8s.io/apimachinery/pkg/api/resource", "QuantityValue"): "int-or-string",
    ("k8s.io/apimachinery/pkg/util/intstr", "IntOrString"): "int-or-string",
    ("k8s.io/api/core/v1", "PullPolicy"): "string",
    ("k8s.io/api/core/v1", "HostPathType"): "string",
    ("k8s.io/api/core/v1", "ResourceList"): {"map": "int-or-string"},
}
# Types of parsed packages that unmarshal themselves (UnmarshalJSON), with what they accept.
CUSTOM_JSON = {
    # "abcdef.0123456789abcdef" (UnmarshalJSON in bootstraptoken/v1/utils.go)
    ("k8s.io/kubernetes/cmd/kubeadm/app/apis/bootstraptoken/v1", "BootstrapTokenString"): "string",
    # a duration string, or an integer of nanoseconds
    ("k8s.io/component-base/logs/api/v1", "TimeOrMetaDuration"): "int-or-string",
}

BASIC = {"string": "string", "bool": "bool", "float32": "float", "float64": "float"}
BASIC.update({t: "int" for t in (
    "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
    "uintptr", "byte", "rune")})


class GoError(Exception):
    pass


# --- sources ------------------------------------------------------------------------------

class Source:
    """One Go module: a git tree at a revision, or a plain directory."""

    def __init__(self, arg):
        path, _, rev = arg.partition("@")
        self.path = os.path.abspath(path)
        self.git = self._is_git(self.path)
        self.note = None
        if self.git:
            self.rev = rev or "HEAD"
            self.commit = self._git("rev-parse", self.rev + "^{commit}").strip()
            if self.rev == "HEAD":
                self.rev = self.commit
        else:
            if rev:
                raise SystemExit(f"{arg}: @REV is only for git repositories")
            ref = os.path.join(self.path, "UPSTREAM-REF")
            if not os.path.exists(ref):
                raise SystemExit(f"{path}: not a git repository and no UPSTREAM-REF file names its revision")
            text = open(ref).read().split(None, 1)
            self.rev, self.note = text[0], (text[1].strip() if len(text) > 1 else None)
            self.commit = self.rev if re.fullmatch(r"[0-9a-f]{40}", self.rev) else None
        m = re.search(r"^module\s+(\S+)", self.read("go.mod"), re.M)
        if not m:
            raise SystemExit(f"{arg}: go.mod has no module line")
        self.module = m.group(1)

    @staticmethod
    def _is_git(path):
        """A bare repository, or the top of a work tree (not a directory inside some other repository)."""
        def git(*args):
            r = subprocess.run(["git", "-C", path, *args], capture_output=True, text=True)
            return r.stdout.strip() if r.returncode == 0 else None
        if git("rev-parse", "--is-bare-repository") == "true":
            return True
        top = git("rev-parse", "--show-toplevel")
        return bool(top) and os.path.realpath(top) == os.path.realpath(path)

    def _git(self, *args):
        return subprocess.run(["git", "-C", self.path, *args], check=True, capture_output=True, text=True).stdout

    def read(self, rel):
        if self.git:
            return self._git("show", f"{self.rev}:{rel}")
        with open(os.path.join(self.path, rel)) as f:
            return f.read()

    def list_go(self, rel_dir):
        """Non-test, non-generated .go files of one package directory."""
        if self.git:
            names = [os.path.basename(p) for p in
                     self._git("ls-tree", "--name-only", f"{self.rev}:{rel_dir}").split()]
        else:
            d = os.path.join(self.path, rel_dir)
            names = sorted(os.listdir(d)) if os.path.isdir(d) else []
        return [f"{rel_dir}/{n}" for n in sorted(names)
                if n.endswith(".go") and not n.endswith("_test.go") and not n.startswith("zz_generated")]


# --- a small Go lexer and parser of type declarations --------------------------------------

TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+)
  | (?P<nl>\n)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<raw>`[^`]*`)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<rune>'(?:[^'\\\n]|\\.)+')
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<num>\.?[0-9][0-9A-Za-z_.]*(?:[eEpP][+-][0-9_]+)?)
  | (?P<op>\.\.\.|<-|&&|\|\||<<=|>>=|&\^=|[-+*/%&|^<>=!:]=|<<|>>|&\^|\+\+|--|[-+*/%&|^<>=!~:;,.()\[\]{}])
""", re.S | re.X)


def lex(text, name):
    """Tokens as (kind, value), comments dropped, Go's automatic semicolons inserted."""
    out, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise GoError(f"{name}: cannot lex at offset {pos}: {text[pos:pos + 20]!r}")
        kind, val = m.lastgroup, m.group()
        pos = m.end()
        if kind == "ws" or kind == "lcomment":
            continue
        if kind == "bcomment":
            if "\n" not in val:
                continue
            kind, val = "nl", "\n"
        if kind == "nl":
            # a newline ends a statement after an identifier, literal, keyword or closing bracket
            if out and (out[-1][0] in ("ident", "raw", "str", "rune", "num")
                        or out[-1][1] in (")", "]", "}", "++", "--")):
                out.append(("op", ";"))
            continue
        out.append((kind, val))
    out.append(("op", ";"))
    return out


class Parser:
    def __init__(self, tokens, name):
        self.t, self.i, self.name = tokens, 0, name

    def peek(self, k=0):
        j = self.i + k
        return self.t[j] if j < len(self.t) else ("eof", "")

    def next(self):
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, val):
        tok = self.next()
        if tok[1] != val:
            raise GoError(f"{self.name}: expected {val!r}, got {tok[1]!r}")
        return tok

    def skip_balanced(self):
        """Skip from an opening bracket to its match."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        stack = [pairs[self.next()[1]]]
        while stack:
            tok = self.next()
            if tok[0] == "eof":
                raise GoError(f"{self.name}: unbalanced brackets")
            if tok[0] == "op" and tok[1] in pairs:
                stack.append(pairs[tok[1]])
            elif tok[0] == "op" and tok[1] == stack[-1]:
                stack.pop()

    def file(self):
        """(package name, imports {name: path}, types {name: type expr}, custom-JSON type names)"""
        self.expect("package")
        pkg = self.next()[1]
        imports, types, custom = {}, {}, set()
        while self.peek()[0] != "eof":
            tok = self.peek()
            if tok == ("op", ";"):
                self.next()
            elif tok == ("ident", "import"):
                self.next()
                if self.peek()[1] == "(":
                    self.next()
                    while self.peek()[1] != ")":
                        if self.peek()[1] == ";":
                            self.next()
                            continue
                        self._import(imports)
                    self.next()
                else:
                    self._import(imports)
            elif tok == ("ident", "type"):
                self.next()
                if self.peek()[1] == "(":
                    self.next()
                    while self.peek()[1] != ")":
                        if self.peek()[1] == ";":
                            self.next()
                            continue
                        self._typespec(types)
                    self.next()
                else:
                    self._typespec(types)
            elif tok == ("ident", "func"):
                self.next()
                if self.peek()[1] == "(":  # a method: note types that unmarshal themselves
                    start = self.i
                    self.skip_balanced()
                    recv = [v for k, v in self.t[start:self.i] if k == "ident"]
                    if self.peek()[1] == "UnmarshalJSON" and recv:
                        custom.add(recv[-1])
                self._skip_decl()
            else:
                self._skip_decl()
        return pkg, imports, types, custom

    def _skip_decl(self):
        while True:
            tok = self.peek()
            if tok[0] == "eof":
                return
            if tok[0] == "op" and tok[1] in "([{":
                self.skip_balanced()
                continue
            self.next()
            if tok == ("op", ";"):
                return

    def _import(self, imports):
        alias = None
        if self.peek()[0] == "ident" or self.peek()[1] in (".", "_"):
            alias = self.next()[1]
        path = json.loads(self.next()[1]) if self.peek()[0] == "str" else self.next()[1].strip("`")
        imports[alias or path.rsplit("/", 1)[-1]] = path
        if self.peek()[1] == ";":
            self.next()

    def _typespec(self, types):
        name = self.next()[1]
        if self.peek()[1] == "[" and self.peek(1)[0] == "ident" and self.peek(2)[1] != "]":
            # type parameters (not "[]T" nor "[N]T"): not used by these APIs
            raise GoError(f"{self.name}: generic type {name} is not supported")
        if self.peek()[1] == "=":
            self.next()
        types[name] = self.type_expr()
        if self.peek()[1] == ";":
            self.next()

    def type_expr(self):
        tok = self.next()
        v = tok[1]
        if v == "*":
            return self.type_expr()
        if v == "(":
            t = self.type_expr()
            self.expect(")")
            return t
        if v == "[":
            if self.peek()[1] != "]":  # an array [N]T
                while self.peek()[1] != "]":
                    self.next()
            self.expect("]")
            return ("list", self.type_expr())
        if v == "map":
            self.expect("[")
            key = self.type_expr()
            self.expect("]")
            return ("map", key, self.type_expr())
        if v == "struct":
            return ("struct", self.struct_body())
        if v == "interface":
            self.skip_balanced()
            return ("any",)
        if v == "func":  # parsed to be skipped; has no JSON form
            self.skip_balanced()
            if self.peek()[1] == "(":
                self.skip_balanced()
            elif self.peek()[1] not in (";", ")", "]", "}", ",", "=") and self.peek()[0] not in ("raw", "str"):
                self.type_expr()
            return ("nojson", "func")
        if v in ("chan", "<-"):
            if self.peek()[1] in ("<-", "chan"):
                self.next()
            self.type_expr()
            return ("nojson", "chan")
        if tok[0] != "ident":
            raise GoError(f"{self.name}: unexpected {v!r} in a type")
        if self.peek()[1] == "." and self.peek(1)[0] == "ident":
            self.next()
            return ("named", v, self.next()[1])
        return ("named", None, v)

    def struct_body(self):
        """[(names or None for embedded, type expr, tag)]"""
        self.expect("{")
        fields = []
        while True:
            if self.peek()[1] == ";":
                self.next()
                continue
            if self.peek()[1] == "}":
                self.next()
                return fields
            a, b = self.peek(), self.peek(1)
            if a[1] == "*" or (a[0] == "ident" and (b[1] in (";", "}", ".") or b[0] in ("raw", "str"))):
                names, typ = None, self.type_expr()  # embedded
            else:
                names = [self.next()[1]]
                while self.peek()[1] == ",":
                    self.next()
                    names.append(self.next()[1])
                typ = self.type_expr()
            tag = ""
            if self.peek()[0] in ("raw", "str"):
                tok = self.next()
                tag = tok[1][1:-1] if tok[0] == "raw" else json.loads(tok[1])
            fields.append((names, typ, tag))


def json_value(tag):
    """The value of a struct tag's json key ("" if none)."""
    for key, val in re.findall(r'([A-Za-z_][A-Za-z0-9_]*):"((?:[^"\\]|\\.)*)"', tag):
        if key == "json":
            return val
    return ""


# --- from parsed packages to JSON kinds ----------------------------------------------------

class Model:
    def __init__(self, sources):
        self.pkgs = {}  # import path -> {"types": {name: (type expr, imports of its file)}, "custom": names}
        self.files = {}
        for path in PACKAGES:
            src = next((s for s in sources if path == s.module or path.startswith(s.module + "/")), None)
            if src is None:
                raise SystemExit(f"no SRC_DIR holds module of {path} (give its repository)")
            rel = path[len(src.module):].lstrip("/")
            files = src.list_go(rel)
            if not files:
                raise SystemExit(f"{src.path}@{src.rev}: no Go files in {rel}")
            pkg = {"types": {}, "custom": set()}
            for f in files:
                _, imports, types, custom = Parser(lex(src.read(f), f), f).file()
                for name, expr in types.items():
                    pkg["types"][name] = (expr, imports)
                pkg["custom"] |= custom
                self.files.setdefault(src, []).append(f)
            unknown = {(path, t) for t in pkg["custom"]} - set(CUSTOM_JSON)
            if unknown:
                raise SystemExit(f"types with their own UnmarshalJSON, add them to CUSTOM_JSON: {sorted(unknown)}")
            self.pkgs[path] = pkg
        self.out = {}  # output type name -> {"fields": {...}}
        self.cache = {}  # (package, type) -> kind

    def label(self, path, name):
        return f"{PACKAGES[path]}.{name}"

    def kind(self, expr, path, imports):
        """The JSON kind of a type expression met in package `path`."""
        tag = expr[0]
        if tag == "list":
            inner = expr[1]
            if inner == ("named", None, "byte"):
                return "string"  # []byte is base64
            return {"list": self.kind(inner, path, imports)}
        if tag == "map":
            return {"map": self.kind(expr[2], path, imports)}
        if tag == "any":
            return "any"
        if tag == "nojson":
            raise GoError(f"{path}: a {expr[1]} type has no JSON form")
        if tag == "struct":
            raise GoError(f"anonymous struct in {path} is not supported")
        _, qual, name = expr
        if qual is None and name in BASIC:
            return BASIC[name]
        if qual is None and name in ("any", "error"):
            return "any"
        target = path if qual is None else imports.get(qual)
        if target is None:
            raise GoError(f"{path}: unknown package {qual} of {qual}.{name}")
        return self.named(target, name)

    def named(self, path, name):
        if (path, name) in CUSTOM_JSON:
            return CUSTOM_JSON[(path, name)]
        if path not in self.pkgs:
            ext = EXTERNAL.get((path, name), "any")
            if isinstance(ext, dict) and "fields" in ext:
                raise GoError(f"{path}.{name} is only usable inline")
            return ext
        decl = self.pkgs[path]["types"].get(name)
        if decl is None:
            raise GoError(f"{path}: no type {name}")
        expr, imports = decl
        if expr[0] != "struct":
            return self.kind(expr, path, imports)
        key, label = (path, name), self.label(path, name)
        if key not in self.cache:
            self.cache[key] = {"struct": label}  # before the fields: types may refer to themselves
            fields = self.fields(path, name)
            if fields is None:  # it inlines a type of a package not parsed: its fields are unknown
                self.cache[key] = "any"
            else:
                self.out[label] = {"fields": fields}
        return self.cache[key]

    def fields(self, path, name, seen=()):
        """{json name: kind} of a struct, with Go's rules for embedded structs; None if open."""
        if (path, name) in seen:
            raise GoError(f"{path}.{name} embeds itself")
        expr, imports = self.pkgs[path]["types"][name]
        own, inlined = {}, []
        for names, typ, tag in expr[1]:
            raw, jname = json_value(tag), json_value(tag).split(",")[0]
            if raw == "-":
                continue
            if names is None:  # embedded: a struct without a json name is inlined (encoding/json)
                base = typ[2]
                if not jname:
                    sub = self.embedded(typ, path, imports, seen + ((path, name),))
                    if sub is None:
                        return None  # inlines a type of a package not parsed: fields unknown
                    if sub is not False:
                        inlined.append(sub)
                        continue
                if jname or base[:1].isupper():
                    own[jname or base] = self.kind(typ, path, imports)
                continue
            for n in names:
                if n[:1].isupper():
                    own[jname or n] = self.kind(typ, path, imports)
        # Go's rule: a field of the outer struct hides promoted ones; promoted fields of the same
        # name at the same depth cancel out (here: an error, to be looked at).
        result = {}
        promoted = {}
        for sub in inlined:
            for k, v in sub.items():
                if k in promoted and promoted[k] != v:
                    raise GoError(f"{path}.{name}: embedded structs both give field {k}")
                promoted[k] = v
        result.update(promoted)
        result.update(own)
        return result

    def embedded(self, typ, path, imports, seen):
        """Fields of an embedded struct (inlined), None if unknown (open), False if not a struct."""
        _, qual, base = typ
        target = path if qual is None else imports.get(qual)
        if target is None:
            raise GoError(f"{path}: unknown package {qual} of {qual}.{base}")
        if target not in self.pkgs:
            ext = EXTERNAL.get((target, base))
            if isinstance(ext, dict) and "fields" in ext:
                return dict(ext["fields"])
            if ext is None:
                return None
            return False
        decl = self.pkgs[target]["types"].get(base)
        if decl is None:
            raise GoError(f"{path}: no type {base} in {target}")
        if decl[0][0] != "struct" or (target, base) in CUSTOM_JSON:
            return False
        return self.fields(target, base, seen)


def refs(kinds):
    """The {"struct": ...} kinds in a dict of kinds, at any depth."""
    for k in kinds.values():
        while isinstance(k, dict) and ("list" in k or "map" in k):
            k = k.get("list", k.get("map"))
        if isinstance(k, dict):
            yield k


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                           "component-schemas.json"))
    ap.add_argument("src", nargs="+", metavar="SRC_DIR")
    args = ap.parse_args()
    sources = [Source(a) for a in args.src]
    model = Model(sources)
    roots = {}
    for api_version, kind, path in ROOTS:
        k = model.named(path, kind)
        if not isinstance(k, dict) or "struct" not in k:
            raise SystemExit(f"{path}.{kind} is not a struct")
        fields = model.out[k["struct"]]["fields"]
        if fields.get("apiVersion") != "string" or fields.get("kind") != "string":
            raise SystemExit(f"{path}.{kind} does not inline metav1.TypeMeta")
        roots.setdefault(api_version, {})[kind] = k["struct"]
    dangling = {r["struct"] for t in model.out.values() for r in refs(t["fields"])} - set(model.out)
    if dangling:
        raise SystemExit(f"types referred to but not defined (open and self-referring?): {sorted(dangling)}")
    # one line naming the upstream revisions, modules of the same revision together
    by_rev = {}
    for s in sources:
        by_rev.setdefault(s.rev, []).append(s.module)
    ref = "; ".join(f"{', '.join(mods)} {rev[:12] if re.fullmatch(r'[0-9a-f]{40}', rev) else rev}"
                    for rev, mods in by_rev.items())
    doc = {
        "generatedBy": "tests/stdlib/gen-component-schemas.py",
        "upstream": ref,
        "sources": [dict({"module": s.module, "rev": s.rev, "commit": s.commit},
                     **({"note": s.note} if s.note else {}), files=sorted(model.files.get(s, [])))
                for s in sources],
        "roots": roots,
        "types": dict(sorted(model.out.items())),
    }
    with open(args.output, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{args.output}: {sum(len(v) for v in roots.values())} kinds, {len(model.out)} types ({ref})",
          file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except GoError as e:
        sys.exit(f"gen-component-schemas: {e}")
