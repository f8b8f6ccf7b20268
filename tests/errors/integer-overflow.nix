# Multiplying past the largest 64-bit integer.
let
  big = 9223372036854775807;
in
{
  doubled = big * 2;
}
