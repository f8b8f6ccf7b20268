# expect: in interpolation
"a${throw "in interpolation"}b"
