map (s: builtins.match "[0-9]+" s) [ "123" "" "12a" "a12" ]
