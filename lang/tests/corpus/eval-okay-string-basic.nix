[ "" "hello" "with space" "multi
line" "tab	inside" ]
