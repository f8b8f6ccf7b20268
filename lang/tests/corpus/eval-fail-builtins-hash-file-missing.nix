# expect: No such file or directory
builtins.hashFile "sha1" ./lib/no-such-file-to-hash
