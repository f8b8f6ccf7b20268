# expect: custom error message
throw "custom error message"
