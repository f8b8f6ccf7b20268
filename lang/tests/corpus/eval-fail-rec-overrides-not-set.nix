# expect: value is a string while a set was expected
rec {
  __overrides = "not a set";
  a = 1;
}
