# A builtin used without the `builtins.` prefix (it is not a global name).
{
  names = attrNames { a = 1; b = 2; };
}
