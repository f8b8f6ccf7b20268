# Reading a file outside the project is not allowed.
{
  users = builtins.readFile /etc/passwd;
}
