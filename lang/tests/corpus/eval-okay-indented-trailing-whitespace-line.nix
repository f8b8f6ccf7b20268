# the final line is removed if it contains only spaces
[ ''
  a
    '' ''
  a
  b'' ''
  a

'' ]
