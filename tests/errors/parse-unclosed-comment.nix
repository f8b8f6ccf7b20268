# A block comment that is never closed hides the rest of the file.
{
  name = "web";
  /* replicas = 3;
  replicas = 2;
}
