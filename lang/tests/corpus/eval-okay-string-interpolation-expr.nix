let xs = [ "a" "b" ]; s = { v = "val"; }; in
[ "${builtins.head xs}-${s.v}" "${if true then "yes" else "no"}" "${toString (1 + 2)}" "${let y = "z"; in y}" ]
