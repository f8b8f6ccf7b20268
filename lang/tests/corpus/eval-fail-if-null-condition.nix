# expect: value is null while a Boolean was expected
if null then 1 else 2
