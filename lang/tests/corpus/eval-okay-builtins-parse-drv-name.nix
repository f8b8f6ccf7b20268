map builtins.parseDrvName [ "nix-0.12pre12876" "hello-2.10" "foo" "foo-bar-1.0" "a-b-c" "x-1-2" "name-" "-1.0" "gcc-wrapper-10.3.0" "perl5.36-Test-1.2" ]
