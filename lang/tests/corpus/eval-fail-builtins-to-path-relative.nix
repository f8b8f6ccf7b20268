# expect: string 'relative/path' doesn't represent an absolute path
builtins.toPath "relative/path"
