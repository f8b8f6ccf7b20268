# A small library used by the multi-file error tests.
{
  mkService = { name, port, replicas ? 1 }: {
    inherit name replicas;
    targetPort = port + 1;
    url = "http://${name}:${toString port}";
  };
}
