# toString of a path is an absolute path; only look at location-independent parts
let s = toString ./lib/data.txt; n = builtins.stringLength s; in
[ (builtins.substring 0 1 s) (builtins.substring (n - 13) 13 s) (builtins.typeOf s) ]
