# A single mistake early in a long file (':' instead of '='): only this first
# error should be reported, not a cascade of follow-on errors below it.
{
  name : "web";
  replicas = 2;
  image = "nginx:1.25";
  ports = [ 80 443 ];
  labels = { app = "web"; tier = "frontend"; };
  resources = { cpu = "500m"; memory = "256Mi"; };
}
