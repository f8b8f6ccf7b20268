{
  add = 1.5 + 1.25;
  sub = 1.5 - 2.25;
  mul = 1.5 * 4.5;
  div = 7.0 / 2;
  mixedAdd = 1 + 0.5;
  mixedMul = 3 * 0.5;
  mixedDiv = 1 / 2.0;
  mixedSub = 5 - 0.25;
}
