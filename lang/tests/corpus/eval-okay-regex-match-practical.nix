let m = builtins.match; in
[ (m "([^=]+)=(.*)" "key=value=more") (m "v?([0-9]+)\\.([0-9]+)(\\.([0-9]+))?" "v1.2") (m "v?([0-9]+)\\.([0-9]+)(\\.([0-9]+))?" "1.2.3")
  (m "[[:space:]]*([^[:space:]].*[^[:space:]])[[:space:]]*" "  trim me  ") (m ".*\\.nix" "default.nix") (m "(.*)/([^/]*)" "/a/b/c") ]
