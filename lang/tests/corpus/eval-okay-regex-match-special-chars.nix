let m = builtins.match; in [ (m "\n" "\n") (m "a\tb" "a\tb") (m "é+" "éé") (m "[0-9]+\\.[0-9]+" "1.25") ]
