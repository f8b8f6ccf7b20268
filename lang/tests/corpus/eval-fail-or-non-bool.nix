# expect: value is null while a Boolean was expected
null || true
