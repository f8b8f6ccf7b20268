# expect: syntax error, unexpected end of file
# nothing but a comment
