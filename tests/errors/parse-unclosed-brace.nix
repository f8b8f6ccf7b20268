# The outer set is never closed.
{
  name = "web";
  ports = {
    http = 80;
    https = 443;
  };
