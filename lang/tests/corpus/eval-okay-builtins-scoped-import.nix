# scopedImport evaluates a file with extra names around it, ahead of the
# builtins: here `toString` and `import` are replaced for that file only.
let
  scope = {
    greeting = "hello";
    toString = n: "number ${builtins.toString n}";
    import = p: "import of ${baseNameOf p}";
  };
  result = scopedImport scope ./lib/scoped/uses-scope.nix;
  # the same file with another scope gives another value
  again = builtins.scopedImport (scope // { greeting = "bye"; }) ./lib/scoped/uses-scope.nix;
in
{
  inherit (result) text nested;
  againText = again.text;
  untouched = toString 5;
}
