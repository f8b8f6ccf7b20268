# match must match the whole string (implicitly anchored)
let m = builtins.match; in [ (m "b" "abc") (m ".*b.*" "abc") (m "^abc$" "abc") (m "ab" "abab") (m "(ab)*" "abab") ]
