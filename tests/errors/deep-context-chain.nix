# An error at the bottom of a chain of twelve nested function calls: the
# chain of "while evaluating" contexts shown should be bounded.
let
  f0 = x: x + "!";
  f1 = x: f0 x;
  f2 = x: f1 x;
  f3 = x: f2 x;
  f4 = x: f3 x;
  f5 = x: f4 x;
  f6 = x: f5 x;
  f7 = x: f6 x;
  f8 = x: f7 x;
  f9 = x: f8 x;
  f10 = x: f9 x;
  f11 = x: f10 x;
in
{
  result = f11 1;
}
