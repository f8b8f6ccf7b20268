# expect: called without required argument 'b'
({ a, b }: a) { a = 1; }
