# The CPU share is divided by a node count of zero.
let
  nodes = 0;
  totalMillicores = 4000;
in
{
  perNode = totalMillicores / nodes;
}
