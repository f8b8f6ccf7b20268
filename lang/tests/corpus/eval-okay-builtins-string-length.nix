map builtins.stringLength [ "" "a" "hello world" "\n" "ä" "${"ab"}${"cd"}" ]
