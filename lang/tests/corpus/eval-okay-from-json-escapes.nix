builtins.fromJSON ''["quote\" backslash\\ slash\/ nl\n tab\t cr\r bs\b ff\f", "\u00e9\u65e5", "\ud83d\ude00", "\u0041"]''
