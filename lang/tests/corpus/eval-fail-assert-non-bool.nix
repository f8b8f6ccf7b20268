# expect: value is a string while a Boolean was expected
assert "true"; 1
