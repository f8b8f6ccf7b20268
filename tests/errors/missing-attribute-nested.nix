# The last step of a nested path is missing (`http` exists, `htps` does not).
let
  cluster = {
    services.web.ports = { http = 80; https = 443; };
  };
in
{
  port = cluster.services.web.ports.htps;
}
