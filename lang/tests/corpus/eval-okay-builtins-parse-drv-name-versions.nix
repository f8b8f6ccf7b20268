map (s: (builtins.parseDrvName s).version) [ "foo-1" "foo-1.2.3-rc1" "foo-bar" "foo-2bar" "foo-x1" ]
