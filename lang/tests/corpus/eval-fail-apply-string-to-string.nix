# expect: attempt to call something which is not a function but a string
"a" "b"
