# `let` bindings must have static names; this one is computed.
let
  key = "name";
in
let
  ${key} = "web";
in
name
