# Paths relative to the home directory are not allowed.
{
  key = builtins.readFile ~/.ssh/id_ed25519.pub;
}
