builtins.fromTOML ''
  top = 1

  [server]
  host = "localhost"
  port = 8080

  [server.tls]
  enabled = true

  [client]
''
