# Imported with scopedImport: `greeting` and `toString` come from the scope
# it is given, which comes before the builtins.
{ text = "${greeting}, ${toString 5}"; nested = import ./plain.nix; }
