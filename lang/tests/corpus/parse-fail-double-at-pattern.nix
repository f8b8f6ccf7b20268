# expect: syntax error
a @ b @ { }: 1
