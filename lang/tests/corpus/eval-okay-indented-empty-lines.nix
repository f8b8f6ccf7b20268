# empty lines and whitespace-only lines do not count for the minimal indentation
''
    a

    b

    c
''
