# expect: value is an integer while a string was expected
{ } ? ${1}
