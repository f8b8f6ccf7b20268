# expect: syntax error, unexpected ';'
{ a = 1;; }
