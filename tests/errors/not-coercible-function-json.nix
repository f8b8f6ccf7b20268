# A function cannot be output as JSON.
{
  name = "web";
  mkPort = n: n + 8000;
}
