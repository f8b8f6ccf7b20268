# expect: value is a set while a list was expected
map (x: x) { }
