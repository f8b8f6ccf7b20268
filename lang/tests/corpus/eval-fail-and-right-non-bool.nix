# expect: value is a string while a Boolean was expected
true && "yes"
