{ "tab\tkey" = 1; "new\nline" = 2; }
