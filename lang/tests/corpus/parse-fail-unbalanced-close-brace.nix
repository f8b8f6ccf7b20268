# expect: syntax error, unexpected '}'
}
