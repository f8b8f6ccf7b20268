builtins.split "[[:space:]]+" "  lots   of\twhitespace\n"
