{
  pos = 7 / 2;
  negNum = -7 / 2;
  negDen = 7 / (-2);
  bothNeg = (-7) / (-2);
  exact = 8 / 4;
  small = 1 / 3;
  negSmall = -1 / 3;
  zeroNum = 0 / 5;
  builtinPos = builtins.div 7 2;
  builtinNegNum = builtins.div (-7) 2;
  builtinNegDen = builtins.div 7 (-2);
}
