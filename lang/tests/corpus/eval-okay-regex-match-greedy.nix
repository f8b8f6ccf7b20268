let m = builtins.match; in [ (m "(a*)(a*)" "aaa") (m "(.*)-(.*)" "a-b-c") (m "(.+)(.+)" "abcd") (m "(a+)(a?)" "aa") ]
