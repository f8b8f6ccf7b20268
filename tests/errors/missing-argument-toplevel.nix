# A file that is a function: evaluated without --arg, `clusterName` has no value.
{ clusterName, replicas ? 3 }:
{
  name = clusterName;
  inherit replicas;
}
