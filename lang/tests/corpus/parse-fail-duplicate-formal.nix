# expect: duplicate formal function argument 'a'
{ a, a }: a
