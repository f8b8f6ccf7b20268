{
  int = builtins.toJSON 1;
  negInt = builtins.toJSON (-42);
  str = builtins.toJSON "s";
  bool = builtins.toJSON true;
  null = builtins.toJSON null;
  list = builtins.toJSON [ 1 "a" null [ ] ];
  attrs = builtins.toJSON { b = 1; a = [ { c = "d"; } ]; };
  empty = builtins.toJSON { };
  nested = builtins.toJSON { x = { y = { z = [ true false ]; }; }; };
}
