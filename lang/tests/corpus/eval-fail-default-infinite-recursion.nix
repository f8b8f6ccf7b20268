# expect: infinite recursion encountered
({ a ? b, b ? a }: a) { }
