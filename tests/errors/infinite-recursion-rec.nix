# Two attributes of a recursive set that depend on each other.
rec {
  port = targetPort;
  targetPort = port;
}
