# expect: value is an integer while a string was expected
{ ${toString 1} = 1; ${1} = 2; }
