# expect: undefined variable 'count'
# The first definition decides: `other.n = …` makes `other` a plain set, so
# the `rec` of the set merged into it later does not bind `count`.
{
  other.n = 1;
  other = rec {
    count = 2;
    twice = count * 2;
  };
}
