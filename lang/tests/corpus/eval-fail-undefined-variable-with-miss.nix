# expect: undefined variable 'x'
with { a = 1; }; x
