[ (dirOf "/a/b/c") (dirOf "a/b") (dirOf "abc") (dirOf "/") (dirOf "/a") (dirOf "a/b/") (dirOf "") (builtins.dirOf "a//b") ]
