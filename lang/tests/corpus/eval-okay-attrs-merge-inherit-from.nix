# `inherit (e)` inside set literals that are merged under one name: each
# name still comes from its own source.
let
  left = { p = "left p"; q = "left q"; };
  right = { r = "right r"; };
in
{
  both = {
    inner = { inherit (left) p q; };
    inner = { inherit (right) r; };
  };
  mixed = {
    inner = { inherit (right) r; };
    inner.s = "plain";
  };
}
