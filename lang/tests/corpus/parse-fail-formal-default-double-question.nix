# expect: syntax error
{ a ? 1 ? 2 }: a
