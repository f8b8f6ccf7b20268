# One '}' too many after the set.
{
  name = "web";
  replicas = 2;
} }
