# No attribute of `cfg` is close to `storageClass`: no suggestion expected.
let
  cfg = { replicas = 3; image = "nginx:1.25"; };
in
cfg.storageClass
