# expect: syntax error
with { }
