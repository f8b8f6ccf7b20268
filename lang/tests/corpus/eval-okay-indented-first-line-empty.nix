# the first line is dropped only if it is empty (only whitespace)
[ ''
    a
  '' ''   
    b
  '' ]
