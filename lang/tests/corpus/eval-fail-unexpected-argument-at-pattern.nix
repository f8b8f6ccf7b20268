# expect: called with unexpected argument 'z'
(args@{ a }: args) { a = 1; z = 2; }
