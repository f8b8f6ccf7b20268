# An integer literal that does not fit in 64 bits.
{
  bytes = 99999999999999999999;
}
