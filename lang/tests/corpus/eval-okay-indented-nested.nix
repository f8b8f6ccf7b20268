let inner = ''
    inner
  ''; in ''
  outer ${inner} ${''nested ${"deep"}''}
''
