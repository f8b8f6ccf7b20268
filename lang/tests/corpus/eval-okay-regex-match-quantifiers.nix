let m = builtins.match; in
[ (m "a*" "aaa") (m "a+" "") (m "a?" "a") (m "a{2}" "aa") (m "a{2,3}" "aaaa") (m "a{2,}" "aaaaa") (m "(ab)+" "ababab")
  (m "a{0}" "") ]
