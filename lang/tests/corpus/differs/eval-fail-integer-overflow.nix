# Nix 2.8 wraps to -9223372036854775808; kdeploy reports kdeploy::integer-overflow.
9223372036854775807 + 1
