''
    four
      six
    four
''
