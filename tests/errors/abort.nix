# abort stops the evaluation with a message.
let
  mode = "legacy";
in
if mode == "legacy" then abort "the legacy mode was removed in 2.0" else { inherit mode; }
