builtins.fromJSON ''{"a": [1, {"b": null}, [true, [false]]], "c": {"d": {"e": "f"}}, "empty": {}, "list": []}''
