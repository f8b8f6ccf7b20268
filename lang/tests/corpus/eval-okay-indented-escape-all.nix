''
  dollar: ''$ interp: ''${not} quotes: ''' newline: ''\n tab: ''\t cr: ''\r other: ''\q
''
