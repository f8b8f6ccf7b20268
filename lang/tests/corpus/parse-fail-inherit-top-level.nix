# expect: syntax error, unexpected INHERIT
inherit x;
