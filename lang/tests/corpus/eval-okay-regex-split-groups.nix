let s = builtins.split; in
[ (s "(,)" "a,b") (s "(a)|b" "xaybz") (s "([[:digit:]])([[:alpha:]])?" "x1ay2z") (s "(x)(y)?" "1x2xy3") ]
