[ ("abc" < "abd") ("Z" < "a") ("a" < "aa") ("" < " ") ("10" < "9") (builtins.lessThan "a" "b") ]
