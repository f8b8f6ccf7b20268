''
  line one
  line two
''
