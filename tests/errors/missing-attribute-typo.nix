# `replcas` is a misspelling of the attribute `replicas`.
let
  cfg = { replicas = 3; image = "nginx:1.25"; namespace = "default"; };
in
{
  count = cfg.replcas;
}
