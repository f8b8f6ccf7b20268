# A trailing comma is not valid JSON.
builtins.fromJSON ''
  { "name": "web", "replicas": 2, }
''
