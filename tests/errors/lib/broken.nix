# A library file with a syntax error (missing '=' on line 4).
{
  value = 1;
  other 2;
}
