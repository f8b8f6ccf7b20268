builtins.fromJSON ''"raw ünïcödé 日本"''
