# expect: value is a list while a Boolean was expected
[ ] -> true
