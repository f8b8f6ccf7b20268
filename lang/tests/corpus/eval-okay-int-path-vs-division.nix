# `6/3` without spaces is a path literal, with spaces it is a division
{
  spaced = 6 / 3;
  pathType = builtins.typeOf (6/3);
  isPath = builtins.isPath (6/3);
  varDiv = let a = 6; b = 3; in a / b;
}
