# An unbalanced parenthesis in a regular expression.
builtins.match "(web|db" "web"
