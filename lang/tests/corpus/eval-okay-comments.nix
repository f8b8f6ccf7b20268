# line comment
[ 1 /* block comment */ 2 /* multi
line
comment */ 3 # trailing
  /**/ 4 /* nested? /* no */ ]
