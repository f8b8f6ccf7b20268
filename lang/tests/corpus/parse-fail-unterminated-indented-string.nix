# expect: syntax error, unexpected end of file
''abc
