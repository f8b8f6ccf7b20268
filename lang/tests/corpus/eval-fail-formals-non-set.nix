# expect: value is an integer while a set was expected
({ a }: a) 1
