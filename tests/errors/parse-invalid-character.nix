# '%' is not an operator in Nix.
{
  half = 10 % 2;
}
