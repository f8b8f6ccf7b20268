# expect: value is an integer while a string was expected
builtins.compareVersions 1 "2"
