# Fetchers do not exist in kdeploy: evaluation is pure.
{
  chart = builtins.fetchurl "https://example.com/chart.tgz";
}
