# A `<p>` that is not on the search path is an error tryEval catches, and
# only when evaluated; findFile is what `<p>` calls.
let
  missing = builtins.tryEval <kdeploy-lang-test-missing>;
  missingSub = builtins.tryEval <kdeploy-lang-test-missing/sub/file.nix>;
  unused = if false then <kdeploy-lang-test-missing> else "branch not taken";
  viaFindFile = builtins.tryEval (builtins.findFile [ ] "anything");
  found = builtins.findFile [ { prefix = "here"; path = ./lib; } ] "here/simple.nix" == ./lib/simple.nix;
  emptyPrefix = builtins.findFile [ { path = ./lib; } ] "simple.nix" == ./lib/simple.nix;
  skipped = builtins.findFile [ { prefix = "he"; path = ./nope; } { prefix = "here"; path = ./lib; } ] "here" == ./lib;
in
{
  inherit unused viaFindFile found emptyPrefix skipped;
  missing = missing.success;
  missingSub = missingSub.success;
}
