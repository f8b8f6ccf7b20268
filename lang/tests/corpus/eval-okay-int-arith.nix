{
  add = 1 + 2;
  sub = 10 - 25;
  mul = 6 * 7;
  div = 84 / 2;
  mixed = 2 + 3 * 4 - 5;
  parens = (2 + 3) * (4 - 5);
  leftAssocSub = 10 - 2 - 3;
  leftAssocDiv = 100 / 10 / 5;
  mulDiv = 2 * 3 / 4;
  divMul = 2 / 4 * 3;
}
