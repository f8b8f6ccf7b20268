# A list closed with '}' instead of ']'.
{
  name = "web";
  ports = [ 80 443 };
}
