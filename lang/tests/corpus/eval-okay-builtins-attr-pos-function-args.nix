# unsafeGetAttrPos finds the formals of a function in the set
# functionArgs returns: each at its name in the pattern.
let
  connect =
    { host
    , port ? 22
    , ...
    }:
    host;
  args = builtins.functionArgs connect;
  where = name: let p = builtins.unsafeGetAttrPos name args; in [ p.line p.column (baseNameOf p.file) ];
in
{
  host = where "host";
  port = where "port";
  missing = builtins.unsafeGetAttrPos "user" args;
  plain = builtins.unsafeGetAttrPos "x" (builtins.functionArgs (x: x));
}
