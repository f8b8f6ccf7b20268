let m = builtins.match; in
[ (m "abc" "abc") (m "abc" "abcd") (m "b" "abc") (m "" "") (m "" "x") (m "a.c" "abc") (m "a.c" "a
c") ]
