{
  data = builtins.readFile ./lib/data.txt;
  empty = builtins.readFile ./lib/empty.txt;
  noNewline = builtins.readFile ./lib/no-newline.txt;
  unicode = builtins.readFile ./lib/unicode.txt;
  viaString = builtins.readFile (toString ./lib/data.txt);
}
