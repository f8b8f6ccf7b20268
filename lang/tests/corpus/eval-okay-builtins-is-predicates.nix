let vals = [ 1 1.5 "s" true null [ ] { } (x: x) ./lib builtins.add ]; in
{
  isAttrs = map builtins.isAttrs vals;
  isBool = map builtins.isBool vals;
  isFloat = map builtins.isFloat vals;
  isFunction = map builtins.isFunction vals;
  isInt = map builtins.isInt vals;
  isList = map builtins.isList vals;
  isNull = map builtins.isNull vals;
  isPath = map builtins.isPath vals;
  isString = map builtins.isString vals;
}
