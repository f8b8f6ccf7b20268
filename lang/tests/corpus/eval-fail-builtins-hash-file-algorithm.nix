# expect: unknown hash algorithm 'crc32'
builtins.hashFile "crc32" ./lib/hash-me.txt
