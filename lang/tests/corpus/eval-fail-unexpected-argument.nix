# expect: called with unexpected argument 'c'
({ a }: a) { a = 1; c = 2; }
