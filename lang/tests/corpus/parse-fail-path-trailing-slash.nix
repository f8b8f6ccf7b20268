# expect: path has a trailing slash
./lib/
